"""Canonical number text for JSONL.

The rule (FORMAT.md, "Numbers"): take the shortest decimal digits that
round-trip in the value's own precision (f32 for f32/f16/bf16, f64 for f64),
lay them out as ECMAScript's Number::toString does, write negative zero as
`-0.0` (so that parsers that read `-0` as an integer keep the sign) and
write non-finite values as the JSON strings "NaN", "Infinity", "-Infinity".
A `floats` field with `text: hex` (the sketch) is one string of the floats' bits instead.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

NAN_TOKEN = '"NaN"'
POS_INF_TOKEN = '"Infinity"'
NEG_INF_TOKEN = '"-Infinity"'
NEG_ZERO_TOKEN = "-0.0"


def shortest_digits(value: float, precision: str) -> tuple[bool, str, int]:
    """Return (negative, digits, n) with |value| = 0.digits x 10**n.

    `digits` has no leading or trailing zeros. `precision` is "f32" or "f64".
    """
    scalar = np.float32(value) if precision == "f32" else np.float64(value)
    text = np.format_float_scientific(scalar, unique=True, trim="-")
    negative = text.startswith("-")
    mantissa, exponent = text.lstrip("-").split("e")
    digits = mantissa.replace(".", "").rstrip("0") or "0"
    return negative, digits, int(exponent) + 1


def ecmascript_layout(digits: str, n: int) -> str:
    """ECMAScript Number::toString steps 6-10 for digits s (k of them) and exponent n."""
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    exp = n - 1
    sign = "+" if exp >= 0 else "-"
    head = digits[0] if k == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{sign}{abs(exp)}"


def format_float(value: float, precision: str = "f64") -> str:
    """The JSON token for a float in the given precision ("f32" or "f64")."""
    if math.isnan(value):
        return NAN_TOKEN
    if math.isinf(value):
        return POS_INF_TOKEN if value > 0 else NEG_INF_TOKEN
    if value == 0:
        return NEG_ZERO_TOKEN if math.copysign(1.0, value) < 0 else "0"
    negative, digits, n = shortest_digits(value, precision)
    return ("-" if negative else "") + ecmascript_layout(digits, n)


def parse_token(token: str) -> float:
    """Inverse of format_float for one token (used by tests and readers)."""
    if token == NAN_TOKEN:
        return math.nan
    if token == POS_INF_TOKEN:
        return math.inf
    if token == NEG_INF_TOKEN:
        return -math.inf
    return float(token)


def hex_bits(values: Any, precision: str) -> str:
    """Floats as one string of hex digits (FORMAT.md, "Numbers", `text: hex`): each float's IEEE bits in
    its precision, most significant digit first, lowercase, 8 digits for f32 and 16 for f64."""
    with np.errstate(over="ignore"):
        if precision == "f32":
            return np.asarray(values, dtype=np.float64).astype(">f4").tobytes().hex()
        return np.asarray(values, dtype=">f8").tobytes().hex()


def from_hex_bits(text: str, length: int, precision: str) -> list[float]:
    """The floats of hex_bits' text; ValueError unless it is exactly `length` floats of lowercase hex."""
    digits = 8 if precision == "f32" else 16
    if len(text) != length * digits or not all(c in "0123456789abcdef" for c in text):
        raise ValueError(f"not {length} floats of {digits} lowercase hex digits")
    values: list[float] = np.frombuffer(bytes.fromhex(text), dtype=">f4" if precision == "f32" else ">f8").tolist()
    return values
