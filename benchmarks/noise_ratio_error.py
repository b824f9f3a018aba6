#!/usr/bin/env python3
"""How often the Pitman-Morgan interval of error / noise misses the true ratio, on the project's ±1 sketch.

    .venv/bin/python benchmarks/noise_ratio_error.py                 # about two minutes
    .venv/bin/python benchmarks/noise_ratio_error.py --draws 50000 --json out.json

Three-way grading in summary mode bounds ‖x‖ / ‖y‖ (x = a − b the error, y = a − c the noise) from the
sketches of x and y (orchlog/compare/measuring/noise_ratio.py). The test's law is exact for Gaussian signs; the sketch
has ±1 signs and a Walsh-Hadamard structure. For pairs (x, y) of each family, drawn at the boundary
‖x‖ = ‖y‖ where the test is most often wrong, this counts how many true ratios fall outside the interval
at nominal levels 1e-2, 1e-3 and 1e-4 (the miss rate should match the level) and at the level grading uses,
1e-6 (none expected in these draws), and the median width hi / lo.

Families: the error is the reference's own noise plus an independent part, at correlations 0, 0.5, 0.9 and
0.99 (Gaussian elements); the same with the noise a quantization's (uniform within ±half a step, per
element); one spike; a head of 64 elements; a tail; equal pairs in two 64-element groups of the sketch
(its hardest structure for a single norm, benchmarks/sketch_error.py).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import sketch_error
from orchlog.compare.measuring import noise_ratio
from orchlog.encoding import sketch

LEVELS = (1e-2, 1e-3, 1e-4, noise_ratio.FAILURE_PROBABILITY)
Draw = Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]]


def correlated(corr: float, uniform: bool = False) -> Draw:
    def draw(rng: np.random.Generator, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        noise = rng.uniform(-1, 1, (k, n)) if uniform else rng.standard_normal((k, n))
        other = rng.uniform(-1, 1, (k, n)) if uniform else rng.standard_normal((k, n))
        return corr * noise + math.sqrt(1 - corr * corr) * other, noise

    draw.__name__ = f"{'quantization' if uniform else 'Gaussian'} noise, correlation {corr:g}"
    return draw


def structured(fill: sketch_error.Fill) -> Draw:
    """The error a structured difference, the noise Gaussian: unrelated to each other."""

    def draw(rng: np.random.Generator, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        x = np.zeros((k, n))
        fill(x, rng)
        return x, rng.standard_normal((k, n))

    draw.__name__ = f"error: {fill.__name__.replace('_', ' ')}"
    return draw


FAMILIES: list[tuple[Draw, tuple[int, ...]]] = [
    (correlated(0.0), (896, 4096)),
    (correlated(0.5), (896, 4096)),
    (correlated(0.9), (896, 4096)),
    (correlated(0.99), (896, 4096)),
    (correlated(0.7, uniform=True), (896, 4096)),
    (structured(sketch_error.one_element), (896, 4096)),
    (structured(sketch_error.one_head), (896, 4096)),
    (structured(sketch_error.tail), (896, 4096)),
    (structured(sketch_error.aligned(2, 2, False)), (4096,)),
]


def misses(draw: Draw, sizes: tuple[int, ...], draws: int, rng: np.random.Generator) -> dict[str, Any]:
    counts = dict.fromkeys(LEVELS, 0)
    widths = []
    criticals = {level: noise_ratio.critical_correlation(level) for level in LEVELS}
    done = 0
    while done < draws:
        k, n = min(500, draws - done), int(rng.choice(sizes))
        x, y = draw(rng, k, n)
        x *= (np.linalg.norm(y, axis=1) / np.maximum(np.linalg.norm(x, axis=1), 1e-300))[:, None]  # ratio 1
        true = np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
        sx, sy = sketch.sketch_f64(x), sketch.sketch_f64(y)
        for level, c in criticals.items():
            lo, hi, _ = noise_ratio.pitman_morgan(sx, sy, np.zeros(k), np.zeros(k), c)
            counts[level] += int(((true < lo) | (true > hi)).sum())
            if level == noise_ratio.FAILURE_PROBABILITY:
                widths.append(hi / lo)
        done += k
    return {
        "family": draw.__name__,
        "draws": draws,
        **{f"outside at {level:g}": counts[level] for level in LEVELS},
        "median width at 1e-6": float(np.median(np.concatenate(widths))),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=10000, help="draws per family (default 10000)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    head = " | ".join(f"outside at {level:g}" for level in LEVELS)
    print(f"| family | draws | {head} | median hi/lo at 1e-6 |\n|---|---:|" + "---:|" * (len(LEVELS) + 1))
    rows = []
    for draw, sizes in FAMILIES:
        row = misses(draw, sizes, args.draws, rng)
        rows.append(row)
        cells = " | ".join(str(row[f"outside at {level:g}"]) for level in LEVELS)
        print(f"| {row['family']} | {row['draws']} | {cells} | {row['median width at 1e-6']:.3f} |")
    print(f"\n{time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
