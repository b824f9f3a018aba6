"""What partial evidence proves: an interval [lo, hi] for each metric of a pair whose tensors are not at hand.

A summary record carries its leading values, whole-tensor stats, a BLAKE3
and, from schema versions that have it, a linear sketch (FORMAT.md,
"Sketch"). For two such records of the same size whose elements are all
finite (both sides count no NaN or Inf), with d = a − b and n elements:

  max|d|  ≥ the leading values' max difference, and each of |Δmin|, |Δmax|,
            |Δmean|, |Δrms|, |Δabs_max|; ≥ ‖d‖/√n
          ≤ max(max_a − min_b, max_b − min_a); ≤ ‖d‖
  ‖d‖     ≥ the leading values' l2, √n·|Δrms|, √n·|Δmean|; ≥ the sketch's lower bound
          ≤ √n·(rms_a + rms_b), √n·max|d|; ≤ the sketch's upper bound
  rms_diff = ‖d‖/√n; mean|d| in [max(|Δmean|, ‖d‖²/(n·max|d|)), min(‖d‖/√n, max|d|)];
  p99     in [√((‖d‖² − (n − r)·max|d|²)/r), min(max|d|, ‖d‖/√(n − r + 1))], r = ⌈0.99·n⌉
  cosine  = (A² + B² − ‖d‖²)/(2AB) with A = √n·rms_a, B = √n·rms_b, so its interval
            follows from ‖d‖'s.

The sketch gives D = ‖sketch(a) − sketch(b)‖/8, and ‖d‖ lies in
[D/√hi, D/√lo] with probability ≥ 1 − 1e-6 (ESTIMATE_BAND, measured in
benchmarks/sketch_error.py), after D is widened by the rounding the stored
f32 rows and their f64 sums allow. Stats are f64 sums; their rounding widens
the gaps they give by a relative n·2⁻⁵². Anything with NaN or Inf, sizes
that differ or unknown counts keeps only the leading values' lower bounds:
an interval open at the top is what "not proven" looks like here.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from orchlog import kernels
from orchlog.encoding import sketch as sketch_rule
from orchlog.read.batch import RecordBatch
from orchlog.records import record

ROWS = sketch_rule.ROWS

# The metrics an interval is kept for; the others (kl, top1_match, ranks) stay unknown on partial evidence.
BOUNDED = (
    "max_abs",
    "mean_abs",
    "max_rel",
    "p99_abs",
    "rms_diff",
    "l2",
    "cosine",
    "kl",
    "top1_match",
    "rel_l2",
    "rel_max",
)
UNKNOWN = {
    "max_abs": (0.0, math.inf),
    "mean_abs": (0.0, math.inf),
    "max_rel": (0.0, math.inf),
    "p99_abs": (0.0, math.inf),
    "rms_diff": (0.0, math.inf),
    "l2": (0.0, math.inf),
    "cosine": (-1.0, 1.0),
    "kl": (0.0, math.inf),
    "top1_match": (0.0, 1.0),
    "rel_l2": (0.0, math.inf),
    "rel_max": (0.0, math.inf),
}
_EPS = 2.0**-52


@record
class Interval:
    lo: dict[str, np.ndarray]
    hi: dict[str, np.ndarray]
    sketched: np.ndarray  # bool: the sketch took part in the bounds


_UNKNOWN_LO = np.array([lo for lo, _ in UNKNOWN.values()])[:, None]
_UNKNOWN_HI = np.array([hi for _, hi in UNKNOWN.values()])[:, None]


def estimate(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A point inside each proven interval: the value itself when exact, else the geometric middle (the
    proven lower end where the upper one is open; NaN stays NaN)."""
    with np.errstate(invalid="ignore", over="ignore"):
        mid: np.ndarray = np.where(np.isfinite(hi), np.sqrt(lo * hi), lo)
    return mid


def unknown(n: int) -> Interval:
    # Each bound a row of one block: two allocations a round, not one per metric and bound.
    lo, hi = np.empty((len(UNKNOWN), n)), np.empty((len(UNKNOWN), n))
    lo[:], hi[:] = _UNKNOWN_LO, _UNKNOWN_HI
    return Interval(dict(zip(UNKNOWN, lo)), dict(zip(UNKNOWN, hi)), np.zeros(n, dtype=bool))


def exact(values: dict[str, np.ndarray], n: int) -> Interval:
    """The interval of figures measured exactly: the figure itself (unknown where NaN)."""
    out = unknown(n)
    for m in BOUNDED:
        if m not in values:
            continue
        v = values[m]
        known = ~np.isnan(v)
        out.lo[m] = np.where(known, v, out.lo[m])
        out.hi[m] = np.where(known, v, out.hi[m])
    return out


def sketches(batch: RecordBatch, rows: np.ndarray) -> np.ndarray | None:
    """The sketch rows of records `rows` as float64 [k, 64], NaN where a record has none; None when the
    batch has no sketch column (records written before the schema carried one)."""
    column = getattr(batch, "sketch", None)
    if column is None:
        return None
    if isinstance(column, np.ndarray) and column.dtype != object:
        return np.asarray(column[rows], dtype=np.float64)  # fancy indexing copies already
    out = np.full((len(rows), sketch_rule.ROWS), np.nan)
    for k, r in enumerate(rows):
        item = column[r]
        if item is not None and len(item) == sketch_rule.ROWS:
            out[k] = np.asarray(item, dtype=np.float64)
    return out


def sketch_sums(a: RecordBatch, ia: np.ndarray, b: RecordBatch, ib: np.ndarray) -> np.ndarray | None:
    """For pairs (ia[p], ib[p]): [k, 3] sums over the sketch rows (kernels.sketch_sums), NaN where a record
    has no sketch; None when a batch has no sketch column (records written before the schema carried one)."""
    ca, cb = getattr(a, "sketch", None), getattr(b, "sketch", None)
    if ca is None or cb is None:
        return None
    if all(isinstance(c, np.ndarray) and c.dtype != object and c.ndim == 2 for c in (ca, cb)):
        sa, rows_a, sb, rows_b = ca, ia, cb, ib  # the kernel gathers the rows itself
    else:
        sa, sb = sketches(a, ia), sketches(b, ib)
        assert sa is not None and sb is not None, "both batches have a sketch column"
        rows_a = rows_b = np.arange(len(ia))
    if sa.shape[1] != ROWS or sb.shape[1] != ROWS:  # not the schema's sketch: the band does not hold for it
        return None
    return kernels.sketch_sums(sa, rows_a, sb, rows_b)


def row_slack(u_sum: np.ndarray, u2: np.ndarray, n: np.ndarray, rms_a: np.ndarray, rms_b: np.ndarray) -> np.ndarray:
    """The root mean square, over the rows, of how far the difference of two stored sketches can be from the
    sketch of the difference (sketch_sums' second and third sums; tensors of n elements)."""
    with np.errstate(invalid="ignore", over="ignore"):
        # Each stored row is the f64 sum rounded to f32 (relative 2^-24, absolute 2^-150 near zero); the
        # f64 sum itself is off by at most (chunks + 10) * 2^-53 * sum|x| <= ... * n * rms per row. The
        # slack of row j is c * u_j + v with u = |sa| + |sb|, so its mean square is
        # c^2 mean(u^2) + 2 c v mean(u) + v^2.
        chunks = np.ceil(n / sketch_rule.CHUNK)
        v = 2.0**-148 + (chunks + 10) * 2.0**-53 * n * (rms_a + rms_b)
        c = 2.0**-23
        slack: np.ndarray = np.sqrt(c * c * u2 / ROWS + 2 * c * v * u_sum / ROWS + v * v)
    return slack


def sketch_l2(
    sums: np.ndarray, n: np.ndarray, rms_a: np.ndarray, rms_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, usable) for ‖a − b‖ from two sketches' sums (sketch_sums, [k, 3]) of tensors of n finite
    elements."""
    with np.errstate(invalid="ignore", over="ignore"):
        d2, u_sum, u2 = sums.T  # the differences are exact: f32 values subtracted in f64
        d = np.sqrt(d2 / ROWS)
        # Every row finite on both sides, read off the same sums: 64 f32-sized magnitudes cannot overflow.
        usable = np.isfinite(u_sum)
        spread = row_slack(u_sum, u2, n, rms_a, rms_b)
        band_lo, band_hi = sketch_rule.ESTIMATE_BAND
        lo = np.maximum(d - spread, 0.0) / math.sqrt(band_hi)
        hi = (d + spread) / math.sqrt(band_lo)
    usable &= np.isfinite(lo) & np.isfinite(hi)
    return lo, hi, usable


def partial(
    prefix: dict[str, np.ndarray],
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    comparable: np.ndarray,
    n: np.ndarray,
    sketch: np.ndarray | None,
) -> Interval:
    """Intervals for pairs measured on leading values (`prefix`: the prefix metrics, NaN where none) and,
    where `comparable` (same size, every element finite on both sides), on stats [k, 5] (min, max, mean,
    rms, abs_max) and sketches (`sketch`: sketch_sums of the pairs, or None)."""
    k = len(n)
    out = unknown(k)
    lo, hi = out.lo, out.hi
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # The leading values are elements of both tensors: their differences bound the whole from below.
        for m in ("max_abs", "max_rel", "l2"):
            lo[m] = np.fmax(lo[m], prefix[m])
        c = comparable & (n >= 0)
        nf = np.where(c, n, 0).astype(np.float64)
        root = np.sqrt(nf)
        mn_a, mx_a, mean_a, rms_a, am_a = stats_a.T
        mn_b, mx_b, mean_b, rms_b, am_b = stats_b.T
        slack = (nf / 8 + 3) * _EPS * (rms_a + rms_b)  # rounding of the f64 mean and rms
        gap: Callable[[np.ndarray, np.ndarray], np.ndarray] = lambda x, y: (  # noqa: E731
            np.maximum(np.abs(x - y) - slack, 0.0)
        )
        gaps = np.stack([np.abs(mn_a - mn_b), np.abs(mx_a - mx_b), np.abs(am_a - am_b), gap(mean_a, mean_b)])
        stat_lo = np.where(c, np.nanmax(np.where(np.isnan(gaps), -np.inf, gaps), axis=0), 0.0)
        rms_gap = np.where(c, gap(rms_a, rms_b), 0.0)
        mean_gap = np.where(c, gap(mean_a, mean_b), 0.0)
        spread = np.fmax(mx_a - mn_b, mx_b - mn_a)
        l2_lo = np.fmax(lo["l2"], np.where(c, np.fmax(root * rms_gap, root * mean_gap), 0.0))
        l2_hi = np.where(c, root * (rms_a + rms_b) * (1 + nf * _EPS), np.inf)
        max_lo = np.fmax(lo["max_abs"], np.fmax(stat_lo, rms_gap))
        max_hi = np.where(c & ~np.isnan(spread), np.maximum(spread, 0.0), np.inf)
        sketched = np.zeros(k, dtype=bool)
        if sketch is not None:
            s_lo, s_hi, usable = sketch_l2(sketch, nf, rms_a, rms_b)
            sketched = c & usable
            l2_lo = np.where(sketched, np.fmax(l2_lo, s_lo), l2_lo)
            l2_hi = np.where(sketched, np.fmin(l2_hi, s_hi), l2_hi)
        # One side all zero: d is the other side, whose norm and largest magnitude are known exactly.
        zero_a, zero_b = c & (am_a == 0), c & (am_b == 0)
        for z, norm, peak in ((zero_a, root * rms_b, am_b), (zero_b, root * rms_a, am_a)):
            l2_lo, l2_hi = np.where(z, norm, l2_lo), np.where(z, norm, l2_hi)
            max_lo, max_hi = np.where(z, peak, max_lo), np.where(z, peak, max_hi)
        # The norms bound the largest difference and the other way round.
        max_lo = np.fmax(max_lo, np.where(c & (nf > 0), l2_lo / root, 0.0))
        max_hi = np.fmin(max_hi, l2_hi)
        l2_hi = np.fmin(l2_hi, np.where(c, root * max_hi, np.inf))
        empty = c & (nf == 0)
        for m in BOUNDED:
            if m in ("kl", "top1_match", "cosine", "max_rel"):
                continue
            lo[m] = np.where(empty, 0.0, lo[m])
            hi[m] = np.where(empty, 0.0, hi[m])
        some = c & (nf > 0)
        lo["max_abs"], hi["max_abs"] = np.where(empty, 0.0, max_lo), np.where(empty, 0.0, max_hi)
        lo["l2"], hi["l2"] = np.where(empty, 0.0, l2_lo), np.where(empty, 0.0, l2_hi)
        lo["rms_diff"] = np.where(some, l2_lo / root, lo["rms_diff"])
        hi["rms_diff"] = np.where(some, l2_hi / root, hi["rms_diff"])
        mean_lo = np.fmax(mean_gap, np.where(max_hi > 0, l2_lo * l2_lo / (nf * max_hi), 0.0))
        lo["mean_abs"] = np.where(some, mean_lo, lo["mean_abs"])
        hi["mean_abs"] = np.where(some, np.fmin(l2_hi / root, max_hi), hi["mean_abs"])
        r = np.ceil(0.99 * nf)
        p99_lo = np.sqrt(np.maximum(l2_lo * l2_lo - (nf - r) * max_hi * max_hi, 0.0) / r)
        lo["p99_abs"] = np.where(some, np.nan_to_num(p99_lo, nan=0.0, posinf=0.0), lo["p99_abs"])
        hi["p99_abs"] = np.where(some, np.fmin(max_hi, l2_hi / np.sqrt(nf - r + 1)), hi["p99_abs"])
        norm_a, norm_b = root * rms_a, root * rms_b
        both = some & (norm_a > 0) & (norm_b > 0)
        denom = 2 * norm_a * norm_b
        sq = norm_a * norm_a + norm_b * norm_b
        relax = 4 * nf * _EPS * sq / denom  # the rounding of the two norms, as a cosine
        cos_lo = np.clip((sq - l2_hi * l2_hi) / denom - relax, -1.0, 1.0)
        cos_hi = np.clip((sq - l2_lo * l2_lo) / denom + relax, -1.0, 1.0)
        lo["cosine"] = np.where(both, np.nan_to_num(cos_lo, nan=-1.0), lo["cosine"])
        hi["cosine"] = np.where(both, np.nan_to_num(cos_hi, nan=1.0), hi["cosine"])
        # cosine_from_sums' convention: 1 when both are all zero, 0 when one is.
        for z, value in ((c & (am_a == 0) & (am_b == 0), 1.0), (some & ((am_a == 0) ^ (am_b == 0)), 0.0)):
            lo["cosine"], hi["cosine"] = np.where(z, value, lo["cosine"]), np.where(z, value, hi["cosine"])
    for m in BOUNDED:
        default_lo, default_hi = UNKNOWN[m]
        lo[m] = np.where(np.isnan(lo[m]), default_lo, lo[m])
        hi[m] = np.where(np.isnan(hi[m]), default_hi, hi[m])
    out.sketched = sketched
    return out
