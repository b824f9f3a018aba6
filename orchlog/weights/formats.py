"""Readers of the weight formats: safetensors (its layout read here: an 8-byte little-endian length, a JSON
header of `{name: {dtype, shape, data_offsets}}`, then the raw little-endian bytes, memory-mapped) and `.npz`
(NumPy's zip of .npy files, `allow_pickle=False`). GGUF is gguf_file.py's, apart because it needs the gguf
package (the `orchlog[gguf]` extra)."""

from __future__ import annotations

import json
import mmap
from pathlib import Path

import numpy as np

from orchlog.encoding import dtypes
from orchlog.errors import OrchlogError
from orchlog.weights.source import TensorInfo, WeightSource

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


def open_safetensors(files: list[Path], label: str) -> WeightSource:
    tensors: dict[str, TensorInfo] = {}
    where: dict[str, tuple[Path, int, int, str]] = {}
    for path in files:
        try:
            with open(path, "rb") as f:
                n = int.from_bytes(f.read(8), "little")
                header = json.loads(f.read(n))
        except (OSError, ValueError) as exc:
            raise OrchlogError(f"{path}: not a safetensors file ({exc})") from None
        if not isinstance(header, dict):
            raise OrchlogError(f"{path}: the safetensors header is not a JSON object")
        base = 8 + n
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            try:
                kind, shape, (start, stop) = (
                    entry["dtype"],
                    tuple(int(d) for d in entry["shape"]),
                    entry["data_offsets"],
                )
            except (KeyError, TypeError, ValueError):
                raise OrchlogError(f"{path}: tensor {name!r} has a malformed header entry") from None
            if kind not in _SAFETENSORS:
                raise OrchlogError(f"{path}: tensor {name!r} has dtype {kind}, which orchlog weights does not read")
            dtype, size = _SAFETENSORS[kind]
            if stop - start != size * int(np.prod(shape, dtype=np.int64)):
                raise OrchlogError(f"{path}: tensor {name!r}: {stop - start} bytes for shape {list(shape)} of {kind}")
            if name in tensors:
                raise OrchlogError(f"{path}: tensor {name!r} appears twice")
            tensors[name] = TensorInfo(name, shape, dtype)
            where[name] = (path, base + int(start), base + int(stop), dtype)
    maps: dict[Path, mmap.mmap] = {}

    def load(name: str) -> np.ndarray:
        path, start, stop, dtype = where[name]
        if path not in maps:
            with open(path, "rb") as f:
                maps[path] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if stop > len(maps[path]):
            raise OrchlogError(f"{path}: tensor {name!r} runs past the end of the file (truncated?)")
        flat = np.frombuffer(
            maps[path], dtype=dtypes.storage_dtype(dtype), count=(stop - start) // _width(dtype), offset=start
        )
        tensor: np.ndarray = _as_float(flat, dtype).reshape(tensors[name].shape).copy()
        return tensor

    return WeightSource(label, "safetensors", tensors, load)


def _width(dtype: str) -> int:
    return dtypes.storage_dtype(dtype).itemsize


def open_npz(path: Path) -> WeightSource:
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise OrchlogError(f"{path}: not a readable .npz archive ({exc})") from None
    tensors = {}
    for name in archive.files:
        try:
            arr = archive[name]
        except ValueError as exc:  # an object array: pickle, refused
            raise OrchlogError(f"{path}: {name} needs pickle to load, which orchlog never does ({exc})") from None
        tensors[name] = TensorInfo(name, tuple(arr.shape), arr.dtype.name)

    def load(name: str) -> np.ndarray:
        arr: np.ndarray = archive[name]
        return arr if arr.dtype in (np.float32, np.float64) else arr.astype(np.float64)

    return WeightSource(str(path), "npz", tensors, load)
