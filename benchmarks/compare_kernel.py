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
framed     the same rows where a full-mode binary stream pair holds them, a frame
           apart in windows mapped from the page cache and decoded, as the walk
           measures them: a window's pairs in one `kernels.tensor_diffs` call;
           floor: NumPy reading both windows' bytes once
Ratios are floor time / metric time, so 1.0 would be "as fast as reading".
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

import orchlog
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


def _first_frame(path: Path) -> int:
    """Where a binary stream's first record frame starts (past its run header)."""
    where = next(iter(orchlog.open_trace(path))).location
    assert where is not None and where.offset is not None, f"{path} is read as a binary stream"
    return where.offset


def framed(work: Path, repeat: int, records: int = 50_000, window: int = 32 << 20) -> dict[str, Any]:
    """Pairs of rows where a full-mode binary stream pair holds them (benchmarks.compare_traces), measured
    window by window as the walk does: both windows freshly mapped and decoded (which maps their pages),
    then their pairs measured in one call; the floor reads the same windows' bytes instead."""
    from benchmarks.compare_traces import write_rows_pair

    paths = work / f"rows_{records}_a.bin", work / f"rows_{records}_b.bin"
    if not all(p.exists() for p in paths):
        write_rows_pair(*paths, records)
    first = [_first_frame(p) for p in paths]
    fds = [os.open(p, os.O_RDONLY) for p in paths]
    sizes = [os.fstat(fd).st_size for fd in fds]

    def one_pass(kernel: bool) -> tuple[float, int]:
        at, spent, pairs = list(first), 0.0, 0
        while all(pos < size for pos, size in zip(at, sizes)):
            views = [kernels.map_window(fd, pos, min(window, size - pos)) for fd, pos, size in zip(fds, at, sizes)]
            cols = [kernels.decode_frames(v, pos, 1 << 20) for v, pos in zip(views, at)]
            n = min(len(c["offset"]) for c in cols)
            if n == 0:
                break
            start = time.perf_counter()
            if kernel:
                starts = [c["data_pos"][:n] - pos for c, pos in zip(cols, at)]
                counts = [c["data_len"][:n] // 4 for c in cols]
                codes = np.zeros(n, dtype=np.int8)
                kernels.tensor_diffs(
                    [views[0]] * n, starts[0], counts[0], codes, [views[1]] * n, starts[1], counts[1], codes
                )
            else:
                views[0].max(), views[1].max()
            spent += time.perf_counter() - start
            pairs += n
            at = [int(c["next"]) if len(c["offset"]) == n else int(c["offset"][n]) for c in cols]
        return spent, pairs

    try:
        best, pairs = [float("inf"), float("inf")], 0
        for _ in range(repeat):  # in turns: what disturbs one pass falls on both
            for k, is_kernel in enumerate((False, True)):
                spent, pairs = one_pass(is_kernel)
                best[k] = min(best[k], spent)
    finally:
        for fd in fds:
            os.close(fd)
    return {
        "pairs": pairs,
        "floor_s": best[0],
        "kernel_s": best[1],
        "kernel_vs_floor": best[0] / best[1],
        "ns_a_pair": best[1] / pairs * 1e9,
    }
