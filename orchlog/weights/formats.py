"""Readers of the weight formats: safetensors (its layout read here: an 8-byte little-endian length, a JSON
header of `{name: {dtype, shape, data_offsets}}`, then the raw little-endian bytes, memory-mapped) and `.npz`
(NumPy's zip of .npy files, read member by member here: never pickle). GGUF is gguf_file.py's, apart because
it needs the gguf package (the `orchlog[gguf]` extra).

A weight file is input orchlog did not make, so every field is checked before it is used, and a file that
breaks a rule is one clear error (OrchlogError), never an exception from inside NumPy or json:

- safetensors: a header of at most orchlog.read.safetensors_file.MAX_HEADER bytes (the safetensors package's own limit) that fits the file,
  JSON nested at most 1024 deep, an object whose entries each have a known `dtype` (text), a `shape` of at
  most MAX_DIMS non-negative integers, and `data_offsets`, two integers with 0 <= start <= stop inside the
  file, stop - start being exactly the shape's bytes (computed in Python's integers: no overflow);
- npz: members that are .npy arrays (no pickle, none of another kind), each header read by NumPy's own
  bounded parser, a numeric dtype (no object, text, void or structured one), at most MAX_DIMS dimensions, and
  exactly the bytes its shape needs, read in pieces, so that a member that claims more than it holds is
  found truncated after reading what it holds, never allocated up front.
"""

from __future__ import annotations

import mmap
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

import numpy as np

from orchlog import bus_error
from orchlog.encoding import dtypes
from orchlog.errors import OrchlogError
from orchlog.read.files import open_regular
from orchlog.read.safetensors_file import json_header
from orchlog.weights.tensors import TensorInfo, WeightSource

MAX_DIMS = 64  # NumPy's own limit
_PIECE = 16 << 20

# safetensors dtype -> (orchlog dtype name, bytes per element)
_SAFETENSORS = {
    "F64": ("f64", 8),
    "F32": ("f32", 4),
    "F16": ("f16", 2),
    "BF16": ("bf16", 2),
    "I64": ("i64", 8),
    "I32": ("i32", 4),
    "I8": ("i8", 1),
    "U8": ("u8", 1),
}


def _as_float(flat: np.ndarray, dtype: str) -> np.ndarray:
    """Exact float values of stored elements (f16/bf16 widened to f32; ints to f64)."""
    if dtype in ("f16", "bf16"):
        return dtypes.widen(flat, dtype)
    if dtype in ("f32", "f64"):
        return flat
    return flat.astype(np.float64)


def _count(value: Any) -> int | None:
    """A JSON integer that counts something (not a bool, a float or a negative), else None."""
    return value if type(value) is int and value >= 0 else None


def _shape(value: Any) -> tuple[int, ...] | None:
    if not isinstance(value, list) or len(value) > MAX_DIMS:
        return None
    dims = [_count(d) for d in value]
    return None if any(d is None for d in dims) else tuple(d for d in dims if d is not None)


def _header(path: Path) -> tuple[dict[str, Any], int, int]:
    """The JSON header of a safetensors file, the offset of its first tensor byte and the file's size."""
    try:
        return json_header(path)
    except OSError as exc:
        raise OrchlogError(str(exc)) from None
    except ValueError as exc:
        raise OrchlogError(f"{path}: not a safetensors file ({exc})") from None


def open_safetensors(files: list[Path], label: str) -> WeightSource:
    tensors: dict[str, TensorInfo] = {}
    where: dict[str, tuple[Path, int, int, str]] = {}
    for path in files:
        header, base, size = _header(path)
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            kind = entry.get("dtype") if isinstance(entry, dict) else None
            shape = _shape(entry.get("shape")) if isinstance(entry, dict) else None
            offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
            span = [_count(o) for o in offsets] if isinstance(offsets, list) and len(offsets) == 2 else [None, None]
            start, stop = span
            if not isinstance(kind, str) or shape is None or start is None or stop is None:
                raise OrchlogError(
                    f"{path}: tensor {name!r} has a malformed header entry (want dtype: a name, shape: at most "
                    f"{MAX_DIMS} non-negative integers, data_offsets: two non-negative integers)"
                )
            if kind not in _SAFETENSORS:
                raise OrchlogError(f"{path}: tensor {name!r} has dtype {kind!r}, which orchlog weights does not read")
            dtype, width = _SAFETENSORS[kind]
            if not start <= stop <= size - base:
                raise OrchlogError(
                    f"{path}: tensor {name!r}: bytes {start:,} to {stop:,} are not inside the file's "
                    f"{size - base:,} bytes of data (truncated?)"
                )
            if stop - start != width * int(np.prod(shape, dtype=object)):
                raise OrchlogError(f"{path}: tensor {name!r}: {stop - start} bytes for shape {list(shape)} of {kind}")
            if name in tensors:
                raise OrchlogError(f"{path}: tensor {name!r} appears twice")
            tensors[name] = TensorInfo(name, shape, dtype)
            where[name] = (path, base + start, base + stop, dtype)
    maps: dict[Path, mmap.mmap] = {}

    def load(name: str) -> np.ndarray:
        path, start, stop, dtype = where[name]
        if start == stop:
            return np.zeros(tensors[name].shape, dtype=np.float32)
        if path not in maps:
            with open_regular(path) as f:
                maps[path] = bus_error.map_whole(f)
        if stop > len(maps[path]):
            raise OrchlogError(f"{path}: tensor {name!r} runs past the end of the file (was it cut since?)")
        flat = np.frombuffer(
            maps[path], dtype=dtypes.storage_dtype(dtype), count=(stop - start) // _width(dtype), offset=start
        )
        tensor: np.ndarray = _as_float(flat, dtype).reshape(tensors[name].shape).copy()
        return tensor

    return WeightSource(label, "safetensors", tensors, load)


def _width(dtype: str) -> int:
    return dtypes.storage_dtype(dtype).itemsize


# ---------------------------------------------------------------- npz

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError, zlib.error)


def _npy_header(fp: IO[bytes], where: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) of a .npy stream positioned at its start, checked."""
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise ValueError(f"version {version}")
    # NumPy parses the header with tokenize and ast.literal_eval: TokenError and SyntaxError are its too.
    except (*_ZIP_ERRORS, SyntaxError, tokenize.TokenError, TypeError, KeyError, RuntimeError) as exc:
        raise OrchlogError(f"{where} is not a readable .npy array ({type(exc).__name__}: {str(exc)[:200]})") from None
    if dtype.hasobject:
        raise OrchlogError(f"{where} holds Python objects, which need pickle to load; orchlog never loads pickle")
    if dtype.fields is not None or dtype.kind not in "fiub" or dtype.itemsize == 0:
        raise OrchlogError(f"{where} holds {dtype} values; orchlog weights reads numbers only")
    if len(shape) > MAX_DIMS or any(type(d) is not int or d < 0 for d in shape):
        raise OrchlogError(f"{where} has the shape {shape}")
    return shape, bool(fortran), dtype


def open_npz(path: Path) -> WeightSource:
    try:
        archive = zipfile.ZipFile(open_regular(path))
        members = archive.infolist()
    except OrchlogError:
        raise
    except _ZIP_ERRORS as exc:
        raise OrchlogError(f"{path}: not a readable .npz archive ({type(exc).__name__}: {exc})") from None
    tensors: dict[str, TensorInfo] = {}
    layout: dict[str, tuple[zipfile.ZipInfo, tuple[int, ...], bool, np.dtype]] = {}
    for info in members:
        where = f"{path}: member {info.filename!r}"
        if not info.filename.endswith(".npy"):
            raise OrchlogError(f"{where} is not a .npy array (an .npz holds arrays only; pickles are never loaded)")
        name = info.filename[: -len(".npy")]
        if name in tensors:
            raise OrchlogError(f"{where} appears twice")
        try:
            with archive.open(info) as fp:
                shape, fortran, dtype = _npy_header(fp, where)
                header_bytes = fp.tell()
        except OrchlogError:
            raise
        except (*_ZIP_ERRORS, RuntimeError) as exc:
            raise OrchlogError(f"{where} cannot be read ({type(exc).__name__}: {exc})") from None
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if info.file_size != header_bytes + nbytes:
            raise OrchlogError(
                f"{where}: {info.file_size - header_bytes:,} bytes of data for shape {list(shape)} of {dtype} "
                f"({nbytes:,} needed; truncated or padded)"
            )
        tensors[name] = TensorInfo(name, shape, dtype.name)
        layout[name] = (info, shape, fortran, dtype)

    def load(name: str) -> np.ndarray:
        info, shape, fortran, dtype = layout[name]
        where = f"{path}: member {info.filename!r}"
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        data = bytearray()
        try:
            with archive.open(info) as fp:
                _npy_header(fp, where)
                while len(data) < nbytes:  # in pieces: what a member claims is never allocated before it is read
                    piece = fp.read(min(_PIECE, nbytes - len(data)))
                    if not piece:
                        break
                    data += piece
        except OrchlogError:
            raise
        except (*_ZIP_ERRORS, RuntimeError) as exc:
            raise OrchlogError(f"{where} cannot be read ({type(exc).__name__}: {exc})") from None
        if len(data) != nbytes:
            raise OrchlogError(f"{where} is truncated: {len(data):,} of {nbytes:,} bytes")
        arr = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
        out: np.ndarray = np.ascontiguousarray(arr if arr.dtype in (np.float32, np.float64) else arr.astype(np.float64))
        return out

    return WeightSource(str(path), "npz", tensors, load)
