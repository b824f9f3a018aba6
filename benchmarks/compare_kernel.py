"""The metric kernel on two f32 arrays in memory, against merely reading both arrays.

floor      a.max() + b.max(): NumPy reads every byte once, at memory speed
one-pass   max_abs, mean_abs, max_rel, rms (both sides and the difference),
           cosine, l2 and both value ranges: `orchlog.kernels.diff_sums`
           (the fused native kernel), and the same metrics written as
           plain NumPy (one temporary per step) for comparison
exact p99  the one-pass metrics plus the exact nearest-rank p99 of |a-b|:
           native in one read of the arrays (`kernels.diff_sums_and_quantile`),
           native as two calls (the sums, then the select), and NumPy's
           np.partition
rows       the metrics and exact p99 of 20,000 pairs of rows of 896 f32, in one
           `kernels.tensor_diffs` call, each row off its 4-byte boundary as a
           binary stream leaves it; once with every pair different (and once
           more without the p99, for its share), once with every pair equal
Ratios are floor time / metric time, so 1.0 would be "as fast as reading".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.compare_measure import best_of, best_of_each
from orchlog import kernels
from orchlog.compare.measuring.tensor_metrics import P99, tensor_diff


def numpy_metrics(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
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


def run(mib: int, repeat: int) -> dict[str, Any]:
    n = mib * (1 << 20) // 4
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = a + rng.standard_normal(n, dtype=np.float32) * np.float32(1e-3)
    floor = best_of(lambda: (a.max(), b.max()), repeat)
    fused = best_of(lambda: kernels.diff_sums(a, b), repeat)
    plain = best_of(lambda: numpy_metrics(a, b), max(1, repeat // 2))
    with_p99, two_calls = best_of_each(
        [lambda: tensor_diff(a, b, p99=True), lambda: (kernels.diff_sums(a, b), kernels.abs_diff_quantile(a, b, P99))],
        repeat,
    )
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
        "two_calls_with_p99_s": two_calls,
        "two_calls_with_p99_vs_floor": floor / two_calls,
        "numpy_with_p99_s": plain_p99,
        "numpy_with_p99_vs_floor": floor / plain_p99,
    }


def rows(repeat: int, count: int = 20_000, width: int = 896) -> dict[str, Any]:
    """Many small pairs in one call, as the full-mode compare measures a round of hidden-state rows."""
    rng = np.random.default_rng(0)
    va = rng.standard_normal(count * width, dtype=np.float32)
    vb = va + rng.standard_normal(count * width, dtype=np.float32) * np.float32(1e-3)
    # One byte ahead of the values: every row starts off its 4-byte boundary.
    side = {name: np.frombuffer(b"\0" + v.tobytes(), dtype=np.uint8) for name, v in (("a", va), ("b", vb), ("eq", va))}
    starts = np.arange(count, dtype=np.int64) * width * 4 + 1
    counts, codes = np.full(count, width, dtype=np.int64), np.zeros(count, dtype=np.int8)

    def call(a: str, b: str, p99: bool = True) -> None:
        bufs_a, bufs_b = np.empty(count, dtype=object), np.empty(count, dtype=object)
        bufs_a[:], bufs_b[:] = [side[a]] * count, [side[b]] * count
        kernels.tensor_diffs(bufs_a, starts, counts, codes, bufs_b, starts, counts, codes, p99)

    floor = best_of(lambda: (va.max(), vb.max()), repeat)
    different, without_p99 = best_of_each([lambda: call("a", "b"), lambda: call("a", "b", p99=False)], repeat)
    equal = best_of(lambda: call("a", "eq"), repeat)
    return {
        "pairs": count,
        "width": width,
        "floor_s": floor,
        "different_s": different,
        "different_vs_floor": floor / different,
        "different_without_p99_s": without_p99,
        "different_without_p99_vs_floor": floor / without_p99,
        "equal_s": equal,
        "equal_vs_floor": floor / equal,
    }
