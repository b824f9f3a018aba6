"""Difference metrics of two whole tensors, from one fused pass (plus two for the exact p99).

Non-finite elements: a position where both sides hold NaN, or the same
infinity, agrees; a position where they do not is a mismatch, which makes
max_abs infinite and is counted in `nonfinite_mismatch`. The other metrics
are taken over the positions where both sides are finite.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from orchlog import kernels
from orchlog.records import record

P99 = 0.99


@record(frozen=True)
class TensorDiff:
    n: int  # elements compared (the common prefix when the sizes differ)
    max_abs: float
    mean_abs: float
    max_rel: float  # max |a-b| / max(|a|, 1e-8)
    p99_abs: float  # nearest-rank 99th percentile of |a-b|
    rms_a: float
    rms_b: float
    rms_diff: float
    cosine: float
    l2: float
    min_a: float
    max_a: float
    min_b: float
    max_b: float
    nonfinite_mismatch: int = 0

    @property
    def rel_l2(self) -> float:
        """‖a − b‖ / ‖a‖ (0/0 reads 0), as metrics.py's rel_l2 column."""
        norm = self.rms_a * math.sqrt(self.n)
        return 0.0 if self.l2 == 0 else self.l2 / norm if norm > 0 else math.inf

    @property
    def rel_max(self) -> float:
        """max|a − b| / max|a| (0/0 reads 0), as metrics.py's rel_max column."""
        peak = max(abs(self.min_a), abs(self.max_a))
        return 0.0 if self.max_abs == 0 else self.max_abs / peak if peak > 0 else math.inf


def cosine_from_sums(sum_a2: float, sum_b2: float, sum_d2: float) -> float:
    """cos(a, b) from |a|², |b|² and |a-b|².

    a·b = (|a|² + |b|² - |a-b|²) / 2 loses nothing when a and b are close,
    which is when the digits of the cosine matter. Equal squared norms make
    the norms' product |a|² itself, not sqrt(|a|²)² rounded, so identical
    tensors read exactly 1 whatever order their sums were added in
    (native/python/kernels/cosine.hpp is the same function).
    """
    if sum_a2 == 0 or sum_b2 == 0:
        return 1.0 if sum_a2 == sum_b2 else 0.0
    norms = sum_a2 if sum_a2 == sum_b2 else math.sqrt(sum_a2) * math.sqrt(sum_b2)
    return min(1.0, max(-1.0, (sum_a2 + sum_b2 - sum_d2) / (2.0 * norms)))


def _from_sums(s: kernels.DiffSums, p99: float, mismatch: int = 0) -> TensorDiff:
    n = s.n
    if n == 0:
        nan = math.nan
        return TensorDiff(
            0, math.inf if mismatch else 0.0, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, mismatch
        )
    return TensorDiff(
        n=n,
        max_abs=math.inf if mismatch else s.max_abs,
        mean_abs=s.sum_abs / n,
        max_rel=s.max_rel,
        p99_abs=p99,
        rms_a=math.sqrt(s.sum_a2 / n),
        rms_b=math.sqrt(s.sum_b2 / n),
        rms_diff=math.sqrt(s.sum_d2 / n),
        cosine=cosine_from_sums(s.sum_a2, s.sum_b2, s.sum_d2),
        l2=math.sqrt(s.sum_d2),
        min_a=s.min_a,
        max_a=s.max_a,
        min_b=s.min_b,
        max_b=s.max_b,
        nonfinite_mismatch=mismatch,
    )


def tensor_diff(a: np.ndarray, b: np.ndarray, p99: bool = True) -> TensorDiff:
    """Metrics over the common prefix of two flat arrays (f32 stays f32, anything else is f64)."""
    n = min(a.size, b.size)
    a, b = a.reshape(-1)[:n], b.reshape(-1)[:n]
    sums, q = kernels.diff_sums_and_quantile(a, b, P99) if p99 and n else (kernels.diff_sums(a, b), math.nan)
    if sums.all_finite:
        return _from_sums(sums, q)
    with np.errstate(invalid="ignore"):
        fa, fb = np.isfinite(a), np.isfinite(b)
        both = fa & fb
        agree = (np.isnan(a) & np.isnan(b)) | (~fa & ~fb & (a == b))
    mismatch = int(n - both.sum() - agree.sum())
    a_f, b_f = a[both], b[both]
    # f64 throughout (squares too large for f32 stay exact), in the native kernel's fixed order where it is built:
    # NumPy's dot products add in the order of the CPU's BLAS kernel.
    sums = kernels.diff_sums(a_f.astype(np.float64), b_f.astype(np.float64))
    q = kernels.abs_diff_quantile(a_f, b_f, P99) if p99 and a_f.size else math.nan
    return dataclasses.replace(_from_sums(sums, q, mismatch), n=n)
