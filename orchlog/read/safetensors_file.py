"""Tensors of a `.safetensors` file, read lazily: an 8-byte header length, a JSON header, then the bytes.

Every length the file declares is checked against the file before anything
is trusted: the header fits in the file, each tensor's offsets lie inside
the data that follows it and hold exactly its shape's elements.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import orjson

from orchlog.read.files import open_file
from orchlog.records import record
from orchlog.schema_gen import DTYPE_SIZES

MAX_HEADER = 100 << 20  # the safetensors crate's own limit
DTYPES = {
    "F32": "f32",
    "F16": "f16",
    "BF16": "bf16",
    "F64": "f64",
    "I8": "i8",
    "U8": "u8",
    "BOOL": "u8",
    "I32": "i32",
    "I64": "i64",
}


@record(frozen=True)
class SafeTensor:
    """One tensor of a safetensors file; calling it reads its bytes."""

    path: str
    dtype: str
    shape: tuple[int, ...]
    start: int  # byte offset in the file
    nbytes: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def __call__(self) -> bytes:
        with open_file(Path(self.path)) as f:
            f.seek(self.start)
            data: bytes = f.read(self.nbytes)
        if len(data) != self.nbytes:
            raise OSError(f"{self.path} ends {self.nbytes - len(data)} bytes into a tensor")
        return data


def json_header(path: Path) -> tuple[dict[str, Any], int, int]:
    """The file's JSON header, the offset of its first tensor byte and the file's size; ValueError when the
    header is not a JSON object or declares more bytes than the file or MAX_HEADER allow (OSError when
    the path is not a readable regular file)."""
    with open_file(path) as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(8)
        if len(head) < 8:
            raise ValueError("shorter than a safetensors header")
        n = int.from_bytes(head, "little")
        if n > MAX_HEADER or 8 + n > size:
            raise ValueError(f"declares a header of {n:,} bytes, the file has {size:,}")
        raw = f.read(n)
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"its header is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError("its header is not a JSON object")
    return doc, 8 + n, size


def read_header(path: Path) -> dict[str, SafeTensor]:
    """The file's tensors by name; ValueError when the header is malformed or lies about a length."""
    doc, base, size = json_header(path)
    return {
        name: _entry(str(path), name, entry, base, size - base) for name, entry in doc.items() if name != "__metadata__"
    }


def _entry(path: str, name: str, entry: Any, base: int, data_size: int) -> SafeTensor:
    if not isinstance(entry, dict):
        raise ValueError(f"tensor {name[:60]!r} is not an object")
    dtype = DTYPES.get(entry.get("dtype"))  # type: ignore[arg-type]
    shape, offsets = entry.get("shape"), entry.get("data_offsets")
    if dtype is None:
        raise ValueError(
            f"tensor {name[:60]!r} has dtype {str(entry.get('dtype'))[:20]!r}, which orchlog does not read"
        )
    if not isinstance(shape, list) or len(shape) > 64 or not all(_count(d) for d in shape):
        raise ValueError(f"tensor {name[:60]!r} has no valid shape")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_count(o) for o in offsets):
        raise ValueError(f"tensor {name[:60]!r} has no valid data_offsets")
    begin, end = offsets
    numel = math.prod(shape)
    if not begin <= end <= data_size or end - begin != numel * DTYPE_SIZES[dtype]:
        raise ValueError(
            f"tensor {name[:60]!r} declares bytes {begin}..{end} for {numel} {dtype} elements; the file holds {data_size}"
        )
    return SafeTensor(path, dtype, tuple(shape), base + begin, end - begin)


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**62
