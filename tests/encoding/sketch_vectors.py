"""The shared sketch vectors (tests/encoding/sketch_vectors.json), built from the reference.

    .venv/bin/python -m tests.encoding.sketch_vectors      # rewrites the file

The Python, C++ (native/cpp/tests/test_sketch.cpp) and Rust
(native/rust/src/encoding/sketch.rs) tests read the same file and must
reproduce every row bit for bit; tests/encoding/test_sketch_vectors.py checks
that the file is what this module builds.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.encoding import sketch
from orchlog.encoding.dtypes import storage_dtype

PATH = Path(__file__).with_name("sketch_vectors.json")
COMMENT = (
    "Sketch vectors: each case is a tensor (dtype, numel, and either data_hex, its little-endian bytes, or "
    "generate: element i is (output i of SplitMix64 seeded `seed`, shifted right by 11) * 2^-53 * 2 * scale - "
    "scale, computed in f64 and rounded to the dtype, ties to even; for i32, output i shifted right by 32 as a "
    "two's-complement int32) and its 64 sketch rows as f32 bit patterns (expected_bits, 8 hex digits each). "
    "SplitMix64 output j of seed s is mix(s + (j + 1) * 0x9E3779B97F4A7C15), as in FORMAT.md. "
    "Built by tests/encoding/sketch_vectors.py from orchlog/encoding/sketch.py."
)

_F32 = np.dtype("<f4")


def generated(spec: dict[str, Any], dtype: str, numel: int) -> bytes:
    out = sketch.splitmix64(spec["seed"], np.arange(numel, dtype=np.uint64))
    if dtype == "i32":
        return (out >> np.uint64(32)).astype(np.uint32).astype("<u4").tobytes()
    scale = float(spec["scale"])
    values = (out >> np.uint64(11)).astype(np.float64) * 2.0**-53 * 2 * scale - scale
    return values.astype(storage_dtype(dtype)).tobytes()


def _bits_f32(values: list[float]) -> bytes:
    return np.asarray(values, dtype=_F32).tobytes()


def _f16(values: list[float]) -> bytes:
    return np.asarray(values, dtype="<f2").tobytes()


def _bf16_bits(bits: list[int]) -> bytes:
    return np.asarray(bits, dtype="<u2").tobytes()


def _ramp(n: int, dtype: str) -> bytes:
    return (np.arange(n, dtype=np.float64) * 0.37 - n * 0.1).astype(storage_dtype(dtype)).tobytes()


def _cases() -> list[dict[str, Any]]:
    nan_payload = struct.unpack("<f", struct.pack("<I", 0x7FA00001))[0]
    odd = [1.5, -0.0, 1e-45, 3.4028235e38, -3.4028235e38, float("nan"), float("inf"), float("-inf"), 2.5, -7.25]
    cases: list[dict[str, Any]] = [
        {"name": "empty f32", "dtype": "f32", "numel": 0, "data": b""},
        {"name": "empty i64", "dtype": "i64", "numel": 0, "data": b""},
        {"name": "0-d f32 scalar", "dtype": "f32", "numel": 1, "data": _bits_f32([3.25])},
        {"name": "0-d f64 scalar", "dtype": "f64", "numel": 1, "data": np.asarray([-1e-300], "<f8").tobytes()},
        {
            "name": "f32 specials: -0, subnormal, extremes, NaN, Inf",
            "dtype": "f32",
            "numel": 10,
            "data": _bits_f32(odd),
        },
        {"name": "f32 NaN payload alone", "dtype": "f32", "numel": 1, "data": _bits_f32([nan_payload])},
        {"name": "f32 every element NaN or Inf", "dtype": "f32", "numel": 3, "data": _bits_f32(odd[5:8])},
        {"name": "f32 one chunk less one", "dtype": "f32", "numel": 511, "data": _ramp(511, "f32")},
        {"name": "f32 one chunk and one", "dtype": "f32", "numel": 513, "data": _ramp(513, "f32")},
        {"name": "f32 896 (a hidden state)", "dtype": "f32", "numel": 896, "data": _ramp(896, "f32")},
        {
            "name": "f64 values beyond f32: rows become Inf",
            "dtype": "f64",
            "numel": 3,
            "data": np.asarray([1e300, -2e300, 5.0], "<f8").tobytes(),
        },
        {"name": "f64 ramp", "dtype": "f64", "numel": 1000, "data": _ramp(1000, "f64")},
        {
            "name": "f16 specials",
            "dtype": "f16",
            "numel": 6,
            "data": _f16([1.0, -0.0, 65504.0, 6e-8, float("nan"), -np.inf]),
        },
        {"name": "f16 ramp", "dtype": "f16", "numel": 700, "data": _ramp(700, "f16")},
        {
            "name": "bf16 bits with NaN payload and Inf",
            "dtype": "bf16",
            "numel": 5,
            "data": _bf16_bits([0x3F80, 0xBFC0, 0x7FC1, 0xFF80, 0x0001]),
        },
        {
            "name": "bf16 ramp",
            "dtype": "bf16",
            "numel": 600,
            "data": (np.frombuffer(_ramp(600, "f32"), "<u4") >> 16).astype("<u2").tobytes(),
        },
        {"name": "i8 extremes", "dtype": "i8", "numel": 4, "data": np.asarray([-128, 127, 0, -1], "i1").tobytes()},
        {"name": "u8 ramp", "dtype": "u8", "numel": 300, "data": (np.arange(300) % 256).astype("u1").tobytes()},
        {
            "name": "i32 extremes",
            "dtype": "i32",
            "numel": 3,
            "data": np.asarray([-(2**31), 2**31 - 1, 7], "<i4").tobytes(),
        },
        {
            "name": "i64 extremes round to nearest",
            "dtype": "i64",
            "numel": 4,
            "data": np.asarray([2**63 - 1, -(2**63), 2**53 + 1, -3], "<i8").tobytes(),
        },
        {"name": "f32 262144 (1 MiB), generated", "dtype": "f32", "numel": 262144, "generate": {"seed": 1, "scale": 4}},
        {"name": "f32 300001, generated", "dtype": "f32", "numel": 300001, "generate": {"seed": 2, "scale": 0.5}},
        {"name": "f64 70001, generated", "dtype": "f64", "numel": 70001, "generate": {"seed": 3, "scale": 1024}},
        {"name": "i32 100003, generated", "dtype": "i32", "numel": 100003, "generate": {"seed": 4}},
    ]
    return cases


def build() -> dict[str, Any]:
    out = []
    for case in _cases():
        data = case.pop("data", None)
        if data is None:
            data = generated(case["generate"], case["dtype"], case["numel"])
        else:
            case["data_hex"] = data.hex()
        rows = np.asarray(sketch.compute(data, case["dtype"]), dtype=_F32)
        out.append({**case, "expected_bits": [f"{b:08x}" for b in rows.view("<u4").tolist()]})
    return {"_comment": COMMENT, "rows": sketch.ROWS, "cases": out}


def text() -> str:
    return json.dumps(build(), indent=1) + "\n"


if __name__ == "__main__":
    PATH.write_text(text())
    print(f"wrote {PATH}")
