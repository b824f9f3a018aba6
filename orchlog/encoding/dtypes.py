"""Raw tensor bytes <-> exact numbers, per schema dtype.

f16 and bf16 are widened to f32 by bit manipulation, which is exact, and
keeps NaN payloads bit for bit (shifted left by 13 for f16, 16 for bf16;
no quiet bit is set). Hardware converters may quiet a signalling NaN, so
the rule is spelled out here rather than left to them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from orchlog import schema_gen

_NUMPY: dict[str, np.dtype[Any]] = {name: np.dtype(storage) for name, storage in schema_gen.DTYPE_NUMPY.items()}


def storage_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype whose bytes equal the schema dtype's bytes (bf16 -> <u2)."""
    return _NUMPY[dtype]


def from_bytes(data: bytes | memoryview, dtype: str) -> np.ndarray:
    """View raw little-endian bytes as a flat array of the storage dtype."""
    return np.frombuffer(data, dtype=_NUMPY[dtype])


def widen(flat: np.ndarray, dtype: str) -> np.ndarray:
    """Exact widening used for printing: floats to f32 (f64 stays f64), ints to int64."""
    if dtype == "bf16":
        return (flat.astype(np.uint32) << 16).view(np.float32)
    if dtype == "f16":
        return _f16_bits_to_f32(flat.view(np.uint16))
    if dtype in ("f32", "f64"):
        return flat
    return flat.astype(np.int64)


def _f16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    h = bits.astype(np.uint32)
    sign = (h >> 15) << 31
    exp = (h >> 10) & 0x1F
    mant = h & 0x3FF
    normal = sign | ((exp + 112) << 23) | (mant << 13)
    special = sign | (0xFF << 23) | (mant << 13)  # Inf and NaN, payload kept
    out = np.where(exp == 0x1F, special, normal).view(np.float32)
    # Zeros and subnormals: mant * 2**-24 is exact in f32.
    tiny = (mant.astype(np.float32) * np.float32(2.0**-24)) * np.where(sign != 0, np.float32(-1), np.float32(1))
    return np.where(exp == 0, tiny, out).astype(np.float32)


def to_f64(flat: np.ndarray, dtype: str) -> np.ndarray:
    """Values as f64 for stats: exact for every dtype but i64 (round to nearest). A signalling NaN comes out
    quiet, without NumPy's "invalid value encountered in cast" on stderr (a tensor may hold one)."""
    with np.errstate(invalid="ignore"):
        return widen(flat, dtype).astype(np.float64)


def from_f64(values: np.ndarray, dtype: str) -> np.ndarray:
    """f64 values (as a trace's text gives a tensor's elements) back in the dtype's storage, little-endian:
    the tensor's own bytes when they were read from it, but for NaN payloads (text keeps none) and i64
    past 2**53 (text rounds them). A value out of the dtype's range (a damaged trace) is cast quietly."""
    if dtype == "bf16":  # exact: the values were bf16 to begin with
        return (values.astype("<f4").view("<u4") >> 16).astype("<u2")
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(_NUMPY[dtype].newbyteorder("<"))


def exact_in_f64(values: np.ndarray, dtype: str) -> np.ndarray:
    """Per value (a tensor's element read as f64 from text): whether from_f64 gives its bytes back. Not NaN,
    whose payload text drops, nor an i64 past 2**53, which stands for several (i64's max reads as 2**63). An
    int tensor's NaN is a damaged value: cast, and then refuted by the hash."""
    if dtype == "i64":
        exact: np.ndarray = ~(np.abs(values) > 2.0**53)  # NaN compares False: exact, as said
    elif not is_float(dtype):
        exact = np.ones(len(values), dtype=bool)
    else:
        exact = ~np.isnan(values)
    return exact


def is_float(dtype: str) -> bool:
    return schema_gen.DTYPE_KINDS[dtype] == "float"
