"""The comparer's hot loops: native kernels when built, NumPy twins otherwise.

`orchlog._kernels` (native/python/kernels.cpp) does each job in one or two
passes; the functions here call it when it is importable and fall back to
NumPy code that computes the same quantities, so a machine without the
extension gets the same answers, only slower. Tests run both and compare.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

try:
    from orchlog import _kernels as _native
except ImportError:  # pragma: no cover - the extension is built by every install path
    _native = None

NATIVE = _native is not None
REL_FLOOR = 1e-8  # max_rel divides by max(|a|, REL_FLOOR)


@dataclasses.dataclass(frozen=True)
class DiffSums:
    """One pass over two equal-length arrays: the sums every difference metric is made of."""

    n: int
    all_finite: bool  # False: some element on either side is NaN or Inf; the sums below are then unusable
    sum_abs: float
    sum_d2: float
    sum_a2: float
    sum_b2: float
    max_abs: float
    max_rel: float
    min_a: float
    max_a: float
    min_b: float
    max_b: float


def _as_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both sides flat, contiguous, one float dtype (f32 when both fit, else f64), same length."""
    dtype = np.float32 if a.dtype == np.float32 and b.dtype == np.float32 else np.float64
    n = min(a.size, b.size)
    a = np.ascontiguousarray(a.reshape(-1)[:n], dtype=dtype)
    b = np.ascontiguousarray(b.reshape(-1)[:n], dtype=dtype)
    return a, b


def diff_sums(a: np.ndarray, b: np.ndarray, native: bool = True) -> DiffSums:
    """The sums over the common prefix of a and b (f32 inputs stay f32, anything else is f64)."""
    a, b = _as_pair(a, b)
    if native and _native is not None:
        return DiffSums(**_native.pair_metrics(a, b))
    return _diff_sums_numpy(a, b)


def _diff_sums_numpy(a: np.ndarray, b: np.ndarray) -> DiffSums:
    n = a.size
    if n == 0:
        return DiffSums(0, True, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, math.inf, -math.inf, math.inf, -math.inf)
    with np.errstate(all="ignore"):
        finite = bool(np.isfinite(a).all() and np.isfinite(b).all())
        d = a - b
        ad = np.abs(d)
        rel = ad / np.maximum(np.abs(a), a.dtype.type(REL_FLOOR))
        return DiffSums(
            n=n, all_finite=finite,
            sum_abs=float(ad.sum(dtype=np.float64)), sum_d2=float(np.dot(d.astype(np.float64), d)),
            sum_a2=float(np.dot(a.astype(np.float64), a)), sum_b2=float(np.dot(b.astype(np.float64), b)),
            max_abs=float(ad.max()), max_rel=float(rel.max()),
            min_a=float(a.min()), max_a=float(a.max()), min_b=float(b.min()), max_b=float(b.max()),
        )


def abs_diff_quantile(a: np.ndarray, b: np.ndarray, q: float, native: bool = True) -> float:
    """The nearest-rank q-quantile of |a-b| (NumPy's method="inverted_cdf"), exactly.

    Both sides must be finite; |a-b| is taken in the arrays' own precision.
    """
    a, b = _as_pair(a, b)
    n = a.size
    if n == 0:
        return math.nan
    k = max(0, math.ceil(q * n) - 1)
    if native and _native is not None:
        return float(_native.abs_diff_select(a, b, k))
    ad = np.abs(a - b)
    return float(np.partition(ad, k)[k])


def parse_orchlog_jsonl(buf: bytes, first_line: int, native: bool = True) -> dict[str, Any] | None:
    """Columns for the canonical record lines of `buf` (see kernels.cpp), or None without the extension.

    Lines the kernel does not take (headers, non-canonical or broken lines) come
    back in `other` as (line number, start, end) triples for the Python reader.
    """
    if not (native and _native is not None):
        return None
    return _native.parse_orchlog_jsonl(buf, first_line)
