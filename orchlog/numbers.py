"""Numbers written out: for people (`fmt`, `token_text`) and for JSON (`json_number`, `json_rounded`).

The one low module every report and every JSON form formats numbers through,
so that a figure reads the same in compare, guardrail, weights, graft-report
and the diagnosis, and a NaN is the same string in every JSON document."""

from __future__ import annotations

import math
from typing import Any


def fmt(v: float | None) -> str:
    """A figure for a report: `-` when absent, `n/a` for NaN, whole numbers without a point, else 6
    significant digits."""
    if v is None:
        return "-"
    if isinstance(v, float) and math.isnan(v):
        return "n/a"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def token_text(tok: int | None) -> str:
    """A token position for a report; negative or None: records that belong to no single token."""
    return "(no token)" if tok is None or tok < 0 else f"token {tok}"


def json_number(v: float | None) -> float | str | None:
    """A float for JSON: non-finite values as the strings orchlog JSONL uses."""
    if v is None:
        return None
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def json_rounded(v: Any) -> Any:
    """Evidence values for JSON (a number, a NumPy scalar or a list of them): floats rounded to 6
    significant digits, non-finite ones as strings; anything else as it is."""
    if isinstance(v, (list, tuple)):
        return [json_rounded(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if hasattr(v, "item"):  # NumPy scalars
        return json_rounded(v.item())
    if isinstance(v, float):
        return json_number(v) if not math.isfinite(v) else float(f"{v:.6g}")
    return v
