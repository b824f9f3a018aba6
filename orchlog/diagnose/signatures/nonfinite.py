"""`nonfinite_origin`: this is where NaN or Inf first appear: ours has them, the reference does not, and
the records ours computed this from are finite."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Case, Side
from orchlog.diagnose.finding import Finding

F16_MAX = 65504.0
F32_MAX = float(np.finfo(np.float32).max)


def _counts(side: Side) -> tuple[int, int] | None:
    if side.full:
        return int(np.isnan(side.values).sum()), int(np.isinf(side.values).sum())
    if side.stats and "nan_count" in side.stats:
        return int(side.stats.get("nan_count", 0)), int(side.stats.get("inf_count", 0))
    return None


def nonfinite_origin(case: Case) -> Finding | None:
    """Claims when one side holds NaN/Inf the other does not (whole tensors: at places where the other is
    finite; summaries: by the stats' counts) and every input record of that side is finite. Confidence 1.0
    when inputs are known and finite, 0.6 when no input record was found; none when an input is already
    non-finite (then it is inherited)."""
    pair = case.pair
    co, cr = _counts(pair.ours), _counts(pair.ref)
    if co is None or cr is None:
        return None
    if pair.full and pair.ours.values.size == pair.ref.values.size:
        o, r = pair.ours.values, pair.ref.values
        new_o = ~np.isfinite(o) & np.isfinite(r)
        new_r = ~np.isfinite(r) & np.isfinite(o)
        side, new, values = ("ours", new_o, r) if new_o.any() else ("reference", new_r, o)
        if not new.any():
            return None
        nan = int(np.isnan((o if side == "ours" else r)[new]).sum())
        inf = int(new.sum()) - nan
        other_max = float(np.abs(values[new]).max())
        first = int(np.flatnonzero(new)[0])
    else:
        if sum(co) > sum(cr):
            side, (nan, inf) = "ours", (co[0] - cr[0], co[1] - cr[1])
        elif sum(cr) > sum(co):
            side, (nan, inf) = "reference", (cr[0] - co[0], cr[1] - co[1])
        else:
            return None
        other_max, first = float("nan"), None
    inputs = [(p.ours if side == "ours" else p.ref).nonfinite() for p in case.inputs]
    known = [n for n in inputs if n is not None]
    if any(n > 0 for n in known):
        return None
    confidence = 1.0 if known else 0.6
    evidence = {"side": side, "nan": max(nan, 0), "inf": max(inf, 0), "inputs_checked": len(known)}
    if first is not None:
        evidence["first_place"] = first
        evidence["other_side_abs_max_there"] = other_max
    cause = "an overflow, a division by zero, the log or sqrt of a value out of range"
    if first is not None and inf and other_max > F16_MAX and other_max <= F32_MAX:
        cause = f"an overflow: the other side holds {other_max:.4g} there, beyond float16's {F16_MAX:g}"
    origin = "its inputs are finite" if known else "no input record was found to check"
    message = f"{side} has {max(nan, 0)} NaN and {max(inf, 0)} Inf where the other side is finite, and {origin}: "
    message += f"non-finite values start here ({cause})"
    return Finding("nonfinite_origin", confidence, evidence, message)
