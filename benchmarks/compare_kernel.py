"""The metric kernel on two f32 arrays in memory, against merely reading both arrays.

floor      a.max() + b.max(): NumPy reads every byte once, at memory speed
one-pass   max_abs, mean_abs, max_rel, rms (both sides and the difference),
           cosine, l2 and both value ranges: `orchlog.kernels.diff_sums`
           (the fused native kernel), and the same metrics written as
           plain NumPy (one temporary per step) for comparison
exact p99  the one-pass metrics plus the exact nearest-rank p99 of |a-b|:
           the native radix select, and NumPy's np.partition
Ratios are floor time / metric time, so 1.0 would be "as fast as reading".
"""

from __future__ import annotations

import numpy as np

from benchmarks.compare_measure import best_of
from orchlog import kernels
from orchlog.compare.tensor_metrics import tensor_diff


def numpy_metrics(a: np.ndarray, b: np.ndarray) -> dict:
    """The same one-pass metrics as a person would write them in NumPy: one temporary per step."""
    d = a - b
    ad = np.abs(d)
    return {
        "max_abs": ad.max(),
        "mean_abs": ad.mean(),
        "max_rel": (ad / np.maximum(np.abs(a), np.float32(1e-8))).max(),
        "rms_a": np.sqrt(np.mean(a * a)),
        "rms_b": np.sqrt(np.mean(b * b)),
        "rms_diff": np.sqrt(np.mean(d * d)),
        "cosine": np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)),
        "l2": np.linalg.norm(d),
        "ranges": (a.min(), a.max(), b.min(), b.max()),
    }


def numpy_p99(a: np.ndarray, b: np.ndarray) -> float:
    ad = np.abs(a - b)
    k = int(np.ceil(0.99 * ad.size)) - 1
    return float(np.partition(ad, k)[k])


def run(mib: int, repeat: int) -> dict:
    n = mib * (1 << 20) // 4
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = a + rng.standard_normal(n, dtype=np.float32) * np.float32(1e-3)
    floor = best_of(lambda: (a.max(), b.max()), repeat)
    fused = best_of(lambda: kernels.diff_sums(a, b), repeat)
    plain = best_of(lambda: numpy_metrics(a, b), max(1, repeat // 2))
    with_p99 = best_of(lambda: tensor_diff(a, b, p99=True), repeat)
    plain_p99 = best_of(lambda: (numpy_metrics(a, b), numpy_p99(a, b)), max(1, repeat // 2))
    return {
        "array_mib": mib,
        "native": kernels.NATIVE,
        "floor_s": floor,
        "fused_s": fused,
        "fused_vs_floor": floor / fused,
        "numpy_s": plain,
        "numpy_vs_floor": floor / plain,
        "fused_with_p99_s": with_p99,
        "fused_with_p99_vs_floor": floor / with_p99,
        "numpy_with_p99_s": plain_p99,
        "numpy_with_p99_vs_floor": floor / plain_p99,
    }
