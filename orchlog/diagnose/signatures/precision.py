"""`precision`: the difference is a narrower float's rounding (float16, bfloat16) or its saturation."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Case
from orchlog.diagnose.finding import THIN, Finding
from orchlog.diagnose.stats import energy, median, quantile

# name: (explicit mantissa bits, smallest normal exponent, largest finite value)
FORMATS = {"f16": (10, -14, 65504.0), "bf16": (7, -126, 3.3895313892515355e38)}
SATURATION = {"f16": 65504.0, "fp8_e5m2": 57344.0, "fp8_e4m3": 448.0}
MIN_VALUES = 8


def representable(v: np.ndarray, fmt: str) -> np.ndarray:
    """Which values a format holds exactly."""
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt == "f16":
            held: np.ndarray = np.float16(v).astype(np.float64) == v
            return held
        f32 = v.astype(np.float32)
        held = (f32.astype(np.float64) == v) & ((f32.view(np.uint32) & 0xFFFF) == 0)
        return held


def ulp(v: np.ndarray, fmt: str) -> np.ndarray:
    """The spacing of a format's values near each |v| (subnormal spacing below the normal range)."""
    mant, emin, _ = FORMATS[fmt] if fmt in FORMATS else (23, -126, 0.0)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.abs(v)))
    e = np.maximum(np.where(np.isfinite(e), e, emin), emin)
    spacing: np.ndarray = np.exp2(e - mant)
    return spacing


def _nontrivial(v: np.ndarray) -> np.ndarray:
    """Values whose representability says something: not zero, not whole numbers."""
    nontrivial: np.ndarray = v[(v != 0) & (v != np.round(v))]
    return nontrivial


def _rounded_to(r: np.ndarray, o: np.ndarray, thin: bool) -> Finding | None:
    for side, x, y in (("ours", o, r), ("reference", r, o)):
        xs, ys = _nontrivial(x), _nontrivial(y)
        if xs.size < MIN_VALUES or ys.size < MIN_VALUES:
            continue
        for fmt in FORMATS:
            held = float(representable(xs, fmt).mean())
            other = float(representable(ys, fmt).mean())
            if held < (1.0 if thin else 0.999) or other > 0.5:
                continue
            within = float((np.abs(x - y) <= ulp(y, fmt) * 1.001).mean())
            if within < 0.99:
                continue
            evidence = {"format": fmt, "side": side, "representable": held, "other_representable": other}
            evidence["within_one_ulp"] = within
            message = (
                f"{side} holds {fmt} values ({held:.1%} of them exactly representable, {other:.1%} on the other "
                f"side) and differs by at most one {fmt} ulp: a stage rounded to {fmt} (a cast, a {fmt} buffer "
                "or accumulator)"
            )
            return Finding("precision", 0.95 * (THIN if thin else 1.0), evidence, message)
    return None


def _saturated(r: np.ndarray, o: np.ndarray) -> Finding | None:
    total = energy(o - r)
    for name, top in SATURATION.items():
        hit = (np.abs(r) > top * 1.001) & (np.abs(np.abs(o) - top) <= 1e-3 * top)
        if hit.any() and energy((o - r)[hit]) >= 0.8 * total:
            evidence = {"format": name, "limit": top, "places": int(hit.sum())}
            message = (
                f"ours stops at +-{top:g} ({name}'s largest value) at {int(hit.sum())} places where the reference is "
                "larger: a value saturated in a narrower format"
            )
            return Finding("precision", 0.9, evidence, message)
    return None


def _rounding_level(r: np.ndarray, o: np.ndarray) -> Finding | None:
    live = r != 0
    if live.sum() < 64:
        return None
    r, d = r[live], (o - r)[live]
    if median(np.abs(d) / ulp(r, "f32")) < 16:
        return None  # float32 noise
    cos = float(np.dot(d, r) / (np.linalg.norm(d) * np.linalg.norm(r))) if d.any() else 0.0
    if abs(cos) > 0.3:
        return None  # the difference follows the values: a factor, not rounding
    for fmt in FORMATS:
        ratio = np.abs(d) / ulp(r, fmt)
        if quantile(ratio, 0.999) <= 0.51 and 0.15 <= float(ratio.mean()) <= 0.4:
            evidence = {"format": fmt, "mean_ulps": float(ratio.mean()), "max_ulps": float(ratio.max())}
            message = (
                f"the difference is at most half a {fmt} ulp everywhere (mean {ratio.mean():.2f} ulp) and follows no "
                f"pattern: one side rounded to {fmt} somewhere along the way"
            )
            return Finding("precision", 0.7, evidence, message)
    return None


def precision(case: Case) -> Finding | None:
    """Three tests, first claim wins. (1) One side's values (not zero, not whole) are all representable in
    float16 or bfloat16 (99.9% on whole tensors), at most half of the other side's are, and the two differ
    by at most one ulp of that format at 99% of places: confidence 0.95 (x0.6 on a summary's leading
    values). (2) Ours sits at a narrower format's largest value (f16, fp8 e5m2, e4m3) where the reference is
    beyond it, holding >= 80% of the difference: 0.9. (3) Whole tensors: the difference is well above
    float32 noise, uncorrelated with the values (|cos| <= 0.3), within half an ulp of the format at 99.9% of
    places with a mean between 0.15 and 0.4 ulp (rounding's 0.25): 0.7."""
    pair = case.pair
    r, o = pair.common()
    if r.size < MIN_VALUES or not (o - r).any():
        return None
    found = _rounded_to(r, o, case.thin)
    if found is None and pair.full:
        found = _saturated(r, o) or _rounding_level(r, o)
    return found
