"""A GGUF file's layout checked before the gguf package reads it.

The package's reader trusts every count and length it meets: a count of 2**60 array entries makes it loop
for ever (and grow), a length past the end or a half file gives IndexError or ValueError from deep inside,
and a dimension product wraps around in uint64. `check_gguf` walks the same structure the reader walks
(magic, version, counts, each key and value, each tensor's name, dimensions, type and offset) with every
count and length checked against the bytes the file holds and against limits no real model reaches:

- at most MAX_ARRAY entries in one array and MAX_ENTRIES over all arrays (a 256k-token vocabulary is three
  arrays of 256k and the merges, about a million entries in all), arrays nested at most MAX_NESTING deep;
- keys of at most MAX_KEY bytes (the GGUF specification's 65535), tensor names of at most MAX_NAME (ggml's
  GGML_MAX_NAME, 64), at most MAX_DIMS dimensions (GGML_MAX_DIMS, 4), an element count below 2**63;
- a known tensor type whose block divides the innermost dimension, and data inside the file.

What passes is read by the package; anything it still raises is its own error, which gguf_file.py reports.
Both byte orders the reader takes are walked.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path

from orchlog import bus_error
from orchlog.errors import OrchlogError

MAX_ARRAY = 1 << 22
MAX_ENTRIES = 1 << 23
MAX_NESTING = 4
MAX_KEY = 65535
MAX_NAME = 64
MAX_DIMS = 4
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32

# GGUFValueType -> size of a scalar (strings and arrays apart)
_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY, _UINT32 = 8, 9, 4


class _Walk:
    def __init__(self, data: mmap.mmap | bytes, order: str) -> None:
        self.data = data
        self.size = len(data)
        self.pos = 0
        self.order = order
        self.entries = 0

    def fail(self, why: str) -> OrchlogError:
        return OrchlogError(f"{why} (at byte {self.pos})")

    def need(self, n: int, what: str) -> None:
        if n > self.size - self.pos:
            raise self.fail(f"{what} runs past the end of the file")

    def u32(self, what: str) -> int:
        self.need(4, what)
        (v,) = struct.unpack_from(self.order + "I", self.data, self.pos)
        self.pos += 4
        return int(v)

    def u64(self, what: str) -> int:
        self.need(8, what)
        (v,) = struct.unpack_from(self.order + "Q", self.data, self.pos)
        self.pos += 8
        return int(v)

    def text(self, what: str, limit: int) -> str:
        n = self.u64(f"{what}'s length")
        if n > limit:
            raise self.fail(f"{what} of {n:,} bytes (at most {limit:,})")
        self.need(n, what)
        raw = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} is not UTF-8") from None

    def skip_text(self, what: str) -> None:
        n = self.u64(f"{what}'s length")
        self.need(n, what)
        self.pos += n

    def value(self, kind: int, key: str, depth: int = 0) -> None:
        if kind in _SCALAR:
            self.need(_SCALAR[kind], f"the value of {key!r}")
            self.pos += _SCALAR[kind]
        elif kind == _STRING:
            self.skip_text(f"the value of {key!r}")
        elif kind == _ARRAY:
            if depth == MAX_NESTING:
                raise self.fail(f"{key!r} nests arrays more than {MAX_NESTING} deep")
            item = self.u32(f"the item type of {key!r}")
            count = self.u64(f"the length of {key!r}")
            if count > MAX_ARRAY:
                raise self.fail(f"{key!r} is an array of {count:,} entries (at most {MAX_ARRAY:,})")
            self.entries += count
            if self.entries > MAX_ENTRIES:
                raise self.fail(f"more than {MAX_ENTRIES:,} array entries in all")
            if item in _SCALAR:
                self.need(count * _SCALAR[item], f"the array {key!r}")
                self.pos += count * _SCALAR[item]
            elif item in (_STRING, _ARRAY):
                self.need(count * (8 if item == _STRING else 12), f"the array {key!r}")  # a length (and type) each
                for _ in range(count):
                    self.value(item, key, depth + 1)
            else:
                raise self.fail(f"{key!r} is an array of unknown type {item}")
        else:
            raise self.fail(f"{key!r} has unknown type {kind}")


def check_gguf(path: Path) -> None:
    """OrchlogError naming the first thing the file breaks (module docstring), else None."""
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size < 24:
            raise OrchlogError("too short for a GGUF header")
        with bus_error.map_whole(f) as data:
            _check(data)


def _check(data: mmap.mmap) -> None:
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    if data[:4] != b"GGUF":
        raise OrchlogError("no GGUF magic")
    (version,) = struct.unpack_from("<I", data, 4)
    order = ">" if version & 0xFFFF == 0 else "<"  # the reader's test for a file of the other byte order
    w = _Walk(data, order)
    w.pos = 4
    version = w.u32("the version")
    if version not in VERSIONS:
        raise OrchlogError(f"GGUF version {version}, which the gguf package does not read")
    tensors = w.u64("the tensor count")
    kvs = w.u64("the key count")
    if kvs > (w.size - w.pos) // 13:  # a key's length, a type and the smallest value
        raise w.fail(f"{kvs:,} keys claimed in {w.size:,} bytes")
    if tensors > (w.size - w.pos) // 24:  # a name's length, a dimension count, a type and an offset
        raise w.fail(f"{tensors:,} tensors claimed in {w.size:,} bytes")
    keys: set[str] = set()
    alignment = DEFAULT_ALIGNMENT
    for _ in range(kvs):
        key = w.text("a key", MAX_KEY)
        if key in keys:
            raise w.fail(f"the key {key!r} twice")
        keys.add(key)
        kind = w.u32(f"the type of {key!r}")
        at = w.pos
        w.value(kind, key)
        if key == "general.alignment":
            if kind != _UINT32:
                raise w.fail("general.alignment is not a uint32")
            (alignment,) = struct.unpack_from(order + "I", data, at)
            if alignment == 0 or alignment & (alignment - 1):
                raise w.fail(f"general.alignment {alignment} is not a power of two")
    names: set[str] = set()
    infos = []
    for _ in range(tensors):
        name = w.text("a tensor name", MAX_NAME)
        if name in names:
            raise w.fail(f"the tensor {name!r} twice")
        names.add(name)
        n_dims = w.u32(f"the dimension count of {name!r}")
        if n_dims > MAX_DIMS:
            raise w.fail(f"{name!r} has {n_dims} dimensions (at most {MAX_DIMS})")
        dims = [w.u64(f"a dimension of {name!r}") for _ in range(n_dims)]
        kind = w.u32(f"the type of {name!r}")
        offset = w.u64(f"the offset of {name!r}")
        numel = 1
        for d in dims:
            numel *= d
        if numel >= 1 << 63:
            raise w.fail(f"{name!r} claims {numel:,} elements")
        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
        except (ValueError, KeyError):
            raise w.fail(f"{name!r} has unknown tensor type {kind}") from None
        if block > 1 and (not dims or dims[0] % block):
            raise w.fail(f"{name!r}: its rows are not whole blocks of {block} ({GGMLQuantizationType(kind).name})")
        infos.append((name, offset, numel * type_size // block))
    start = w.pos + (-w.pos) % alignment
    for name, offset, nbytes in infos:
        if start + offset + nbytes > w.size:
            raise OrchlogError(f"the data of {name!r} runs past the end of the file (truncated?)")
