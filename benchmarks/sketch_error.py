#!/usr/bin/env python3
"""How far the sketch's estimate of ‖a − b‖ strays from the truth, measured.

    .venv/bin/python benchmarks/sketch_error.py            # about two minutes
    .venv/bin/python benchmarks/sketch_error.py --draws 200000 --json out.json

For each family of differences d = a − b (random ones, and structured ones an
engine bug makes: one element, one head, a tail, a run, a permutation, a swap,
a few equal spikes, aligned patterns across the sketch's 64-element groups),
draw d at random places and sizes and compute ratio = D² / ‖d‖², where D² is
the mean of the squared rows of sketch(d) (the sketch is linear, so this is
what two records' sketches give, up to their f32 rounding). Prints, per
family, the smallest and largest ratio seen and how many fell outside
ESTIMATE_BAND, the interval that holds with probability ≥ 1 − 1e-6 when the
ratio is distributed as χ²₆₄/64; for the Gaussian family also the empirical
quantiles beside χ²₆₄'s. tests/encoding/test_sketch_estimator.py runs the
same families with fewer draws.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orchlog.encoding import sketch

Fill = Callable[[np.ndarray, np.random.Generator], None]


def _rows(d: np.ndarray) -> np.ndarray:
    return np.arange(len(d))


def gaussian(d: np.ndarray, rng: np.random.Generator) -> None:
    d[:] = rng.standard_normal(d.shape)


def one_element(d: np.ndarray, rng: np.random.Generator) -> None:
    d[_rows(d), rng.integers(0, d.shape[1], len(d))] = rng.standard_normal(len(d))


def one_head(d: np.ndarray, rng: np.random.Generator) -> None:
    """A head of 64 consecutive elements scaled by a few percent: d = 0.03 * a on that head."""
    start = 64 * rng.integers(0, d.shape[1] // 64, len(d))
    cols = start[:, None] + np.arange(64)
    d[_rows(d)[:, None], cols] = 0.03 * rng.standard_normal((len(d), 64))


def tail(d: np.ndarray, rng: np.random.Generator) -> None:
    """The last m elements offset by the same amount."""
    m = rng.integers(1, d.shape[1] + 1, len(d))
    d[:] = np.where(np.arange(d.shape[1]) >= d.shape[1] - m[:, None], 0.02, 0.0)


def run(d: np.ndarray, rng: np.random.Generator) -> None:
    """A run of 8 to 256 consecutive elements offset by the same amount, anywhere."""
    length = rng.integers(8, 257, len(d))
    start = rng.integers(0, d.shape[1] - length + 1)
    i = np.arange(d.shape[1])
    d[:] = np.where((i >= start[:, None]) & (i < (start + length)[:, None]), 1.0, 0.0)


def permutation(d: np.ndarray, rng: np.random.Generator) -> None:
    a = rng.standard_normal(d.shape)
    d[:] = a - np.take_along_axis(a, rng.permuted(np.tile(np.arange(d.shape[1]), (len(d), 1)), axis=1), axis=1)


def swap(d: np.ndarray, rng: np.random.Generator) -> None:
    """Two elements trade places."""
    i = rng.integers(0, d.shape[1], len(d))
    j = (i + rng.integers(1, d.shape[1], len(d))) % d.shape[1]
    gap = rng.standard_normal(len(d))
    d[_rows(d), i], d[_rows(d), j] = gap, -gap


def spikes(k: int) -> Fill:
    """k equal-magnitude spikes of random signs at random places."""

    def fill(d: np.ndarray, rng: np.random.Generator) -> None:
        cols = np.argsort(rng.random(d.shape), axis=1)[:, :k]
        d[_rows(d)[:, None], cols] = rng.choice((-1.0, 1.0), (len(d), k))

    fill.__name__ = f"{k} equal spikes"
    return fill


def every_eighth(d: np.ndarray, rng: np.random.Generator) -> None:
    """Every 8th element (one lane of the layout) offset by the same amount."""
    lane = rng.integers(0, 8, len(d))
    d[:] = np.where(np.arange(d.shape[1]) % 8 == lane[:, None], 1.0, 0.0)


def aligned(spikes_per_group: int, groups: int, same_chunk: bool) -> Fill:
    """Equal spikes on the same pattern (a pair or an affine square of positions p, p^a, p^b, p^a^b)
    in several 64-element groups: the Hadamard transform's own structure, the hardest case for it."""

    def fill(d: np.ndarray, rng: np.random.Generator) -> None:
        chunks = d.shape[1] // sketch.CHUNK
        for row in range(len(d)):
            p, a = rng.integers(0, 64), rng.integers(1, 64)
            b = rng.choice([v for v in range(1, 64) if v != a])
            pos = [p, p ^ a] if spikes_per_group == 2 else [p, p ^ a, p ^ b, p ^ a ^ b]
            if same_chunk:
                c = np.full(groups, rng.integers(0, chunks))
                q = rng.choice(8, groups, replace=False)
            else:
                c = rng.choice(chunks, groups, replace=False)
                q = np.full(groups, rng.integers(0, 8))
            for cc, qq in zip(c, q):
                d[row, [sketch.CHUNK * cc + 8 * pp + qq for pp in pos]] = rng.choice((-1.0, 1.0), len(pos))

    where = "one chunk, several lanes" if same_chunk else "one lane, several chunks"
    fill.__name__ = f"{'pairs' if spikes_per_group == 2 else 'squares'} in {groups} groups ({where})"
    return fill


# (family, tensor sizes drawn from, share of the draws)
FAMILIES: list[tuple[Fill, tuple[int, ...], float]] = [
    (gaussian, (896, 4096, 5000), 1.0),
    (one_element, (896, 4096), 0.1),
    (one_head, (896, 4096), 0.5),
    (tail, (896, 4096), 0.5),
    (run, (896, 4096), 0.5),
    (permutation, (896, 4096), 0.5),
    (swap, (896, 4096), 0.5),
    (spikes(2), (896, 4096), 0.5),
    (spikes(4), (896, 4096), 0.5),
    (spikes(16), (896, 4096), 0.5),
    (every_eighth, (896, 4096), 0.1),
    (aligned(2, 2, False), (4096,), 0.5),
    (aligned(2, 2, True), (4096,), 0.5),
    (aligned(4, 2, False), (4096,), 0.5),
    (aligned(4, 2, True), (4096,), 0.5),
    (aligned(4, 4, False), (4096,), 0.5),
]


def ratios(fill: Fill, sizes: tuple[int, ...], draws: int, rng: np.random.Generator, batch: int = 500) -> np.ndarray:
    out = []
    for k in range(0, draws, batch):
        n = int(rng.choice(sizes))
        d = np.zeros((min(batch, draws - k), n))
        fill(d, rng)
        norm2 = (d * d).sum(axis=1)
        d, norm2 = d[norm2 > 0], norm2[norm2 > 0]
        rows = sketch.sketch_f64(d)
        out.append((rows * rows).mean(axis=1) / norm2)
    return np.concatenate(out)


def summarize(name: str, r: np.ndarray) -> dict[str, Any]:
    lo, hi = sketch.ESTIMATE_BAND
    return {
        "family": name,
        "draws": int(r.size),
        "min": float(r.min()),
        "max": float(r.max()),
        "below": int((r < lo).sum()),
        "above": int((r > hi).sum()),
    }


QUANTILES = (1e-4, 1e-3, 1e-2, 0.5, 0.99, 0.999, 1 - 1e-4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=40000, help="draws of the Gaussian family (others: a share)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    lo, hi = sketch.ESTIMATE_BAND
    print(f"band (P >= 1 - {sketch.FAILURE_PROBABILITY:g} under chi2_64/64): [{lo:.4f}, {hi:.4f}]\n")
    print("| difference | draws | smallest ratio | largest ratio | below band | above band |")
    print("|---|---:|---:|---:|---:|---:|")
    rows, start = [], time.perf_counter()
    quantiles = None
    for fill, sizes, share in FAMILIES:
        r = ratios(fill, sizes, max(1, int(args.draws * share)), rng)
        s = summarize(fill.__name__.replace("_", " "), r)
        rows.append(s)
        print(f"| {s['family']} | {s['draws']} | {s['min']:.3f} | {s['max']:.3f} | {s['below']} | {s['above']} |")
        if fill is gaussian:
            quantiles = [(p, float(np.quantile(r, p)), sketch.chi2_quantile(p) / sketch.ROWS) for p in QUANTILES]
    print("\n| quantile | Gaussian differences | chi2_64 / 64 |\n|---:|---:|---:|")
    for p, emp, model in quantiles or []:
        print(f"| {p:g} | {emp:.4f} | {model:.4f} |")
    print(f"\n{time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"band": [lo, hi], "families": rows, "quantiles": quantiles}, indent=1))


if __name__ == "__main__":
    main()
