"""Field values from untrusted input, checked at the reader's door.

A decoded line or frame can hold anything: `1e400` where a token index
belongs, a list where a name belongs, a number past int64, a meta nested ten
thousand deep. Readers pass each field through these functions, which
return the value the rest of orchlog can rely on (an int64, a str, a tuple
of non-negative dims) or raise ValueError saying what is wrong, so that the
reader reports the record at its file and position and carries on. What is
well-formed but inconsistent (numel against shape, stats against each other)
passes here and is `orchlog validate`'s to report.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from orchlog.encoding.floats import from_hex_bits
from orchlog.encoding.record import check_meta
from orchlog.schema_gen import COLUMNS, DTYPE_SIZES

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def integer(v: Any, name: str) -> int:
    """An int64 (JSON numbers like 3.0 are not integers here: no emitter writes them)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{name} {shown(v)} is not an integer")
    if not INT64_MIN <= v <= INT64_MAX:
        raise ValueError(f"{name} {shown(v)} does not fit in 64 bits")
    return v


def optional_integer(v: Any, name: str) -> int | None:
    return None if v is None else integer(v, name)


def count(v: Any, name: str) -> int:
    """A non-negative int64: element counts, dims."""
    n = integer(v, name)
    if n < 0:
        raise ValueError(f"{name} {n} is negative")
    return n


def lenient_integer(v: Any, name: str) -> int | None:
    """Legacy formats: ints, integral floats and digit strings are all seen in the wild; None stays None."""
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    elif isinstance(v, str) and v.strip().lstrip("+-").isdigit():
        v = int(v)
    return integer(v, name)


def text(v: Any, name: str) -> str:
    if not isinstance(v, str):
        raise ValueError(f"{name} {shown(v)} is not a string")
    return v


def optional_text(v: Any, name: str) -> str | None:
    return None if v is None else text(v, name)


def shape(v: Any) -> tuple[int, ...]:
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"shape {shown(v)} is not a list")
    dims = tuple(count(d, "a shape dimension") for d in v)
    if dims and math.prod(dims) > INT64_MAX:
        raise ValueError(f"shape {list(dims)} has more than 2**63 elements")
    return dims


def number(v: Any) -> float | None:
    """A JSON number or non-finite token as a float (None stays None)."""
    if v is None:
        return None
    if isinstance(v, str):
        if v in _NONFINITE:
            return _NONFINITE[v]
        raise ValueError(f"{shown(v)} is not a number")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{shown(v)} is not a number")
    try:
        return float(v)
    except OverflowError:  # an int past the float range: as JSON's 1e400 reads, an infinity
        return math.inf if v > 0 else -math.inf


def mapping(v: Any, name: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ValueError(f"{name} {shown(v)} is not an object")
    return v


def meta(v: Any) -> dict[str, Any]:
    """A record's meta: an object of scalars (FORMAT.md), nulls allowed; None is empty."""
    if v is None:
        return {}
    doc = mapping(v, "meta")
    check_meta({k: v for k, v in doc.items() if v is not None})
    return dict(doc)


MAX_HEADER_DEPTH = 32  # a run header is an object of scalars and a config two or three levels deep


def header(v: Any) -> dict[str, Any]:
    """A run header (or a legacy metadata.json): an object nested at most MAX_HEADER_DEPTH levels,
    so that printing it as JSON later cannot recurse without end."""
    doc = mapping(v, "the header")
    if depth(doc) > MAX_HEADER_DEPTH:
        raise ValueError(f"the header is nested deeper than {MAX_HEADER_DEPTH} levels")
    return doc


def depth(v: Any) -> int:
    """How deeply lists and objects nest in v (a scalar: 0), counted without recursion."""
    deepest, stack = 0, [(v, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            deepest = max(deepest, level)
            stack.extend((x, level + 1) for x in (item.values() if isinstance(item, dict) else item))
    return deepest


def blake3(v: Any) -> str | None:
    """ASCII text of at most 64 characters, which is what a hash column holds; whether it is
    64 lowercase hex digits is validate's to judge. None when absent."""
    if v is None or v == "":
        return None
    digest = text(v, "blake3")
    if len(digest) > 64 or not digest.isascii():
        raise ValueError(f"blake3 {shown(digest)} is not 64 hex digits")
    return digest


def data_fits(nbytes: int, dtype: str | None, numel: int | None, dims: tuple[int, ...] | None) -> bool:
    """Whether tensor bytes can be read as the record says: a known dtype, numel elements, numel = prod(shape)."""
    if dtype not in DTYPE_SIZES or numel is None or nbytes != numel * DTYPE_SIZES[dtype]:
        return False
    return dims is None or math.prod(dims) == numel


def shown(v: Any) -> str:
    """A value for a message, short and printable whatever it holds."""
    if isinstance(v, str):
        text_ = repr(v)
    elif isinstance(v, (list, dict)):
        text_ = f"(a {type(v).__name__})"
    else:
        text_ = repr(v)
    return text_ if len(text_) <= 40 else text_[:37] + "..."


def identity_values(values: Any) -> dict[str, Any]:
    """The identity fields (the schema's COLUMNS) among a decoded record's values, each checked by its
    kind: text is text (the checkpoint required), integers are 64-bit integers, booleans are booleans,
    floats are lists of their length. A bad one is a ValueError naming it; absent ones are left out."""
    out: dict[str, Any] = {}
    for c in COLUMNS:
        if c.name not in values:
            continue
        v = values[c.name]
        if c.kind == "text":
            out[c.name] = text(v, c.name) if c.name == "checkpoint" else optional_text(v, c.name)
        elif c.kind == "int":
            out[c.name] = optional_integer(v, c.name)
            if out[c.name] is not None and out[c.name] < 0:  # every key number is >= 0 in the schema
                raise ValueError(f"{c.name} {out[c.name]} is negative")
        elif c.kind == "bool":
            if v is not None and not isinstance(v, bool):
                raise ValueError(f"{c.name} is not true, false or null")
            out[c.name] = v
        elif v is not None:
            if isinstance(v, np.ndarray) and v.shape == (c.length,):  # the binary decoder's floats, widened
                out[c.name] = v.tolist()
                continue
            if isinstance(v, str):  # JSONL since schema 3: the floats' bits in hex (FORMAT.md, "Numbers")
                try:
                    out[c.name] = from_hex_bits(v, c.length, c.precision)
                except ValueError as exc:
                    raise ValueError(f"{c.name} is {exc}") from None
                continue
            if not isinstance(v, (list, tuple)) or len(v) != c.length:
                raise ValueError(f"{c.name} is not a list of {c.length} numbers nor their hex bits")
            floats = [number(x) for x in v]
            if c.precision == "f32":  # the nearest f32 of each, as the binary stream stores them
                with np.errstate(over="ignore"):
                    floats = np.asarray(floats, dtype=np.float64).astype(np.float32).astype(np.float64).tolist()
            out[c.name] = floats
    return out
