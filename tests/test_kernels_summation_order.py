"""A pair's sums are the same bits on every machine: the metric kernel adds in one fixed order
(native/python/kernels/metrics.hpp), whatever the vector width, FMA or the number of cores.

The order, written out here with NumPy: element i of a 1,024-element block adds into lane i % L (L = 16
for f32, 8 for f64; each lane in element order, in the input's precision, products rounded first); the
lanes combine pairwise; block sums add up in f64, in order, within pieces of 2**21 elements; pieces add
up in order. Before, the compiler's own vectorisation of the reduction set the order, and a cosine's last
digits differed between an AVX-512 and an AVX2-only machine (the golden reports failed on the latter).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from orchlog import kernels

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")

BLOCK, PIECE = 1024, 1 << 21
SUMS = ("sum_abs", "sum_d2", "sum_a2", "sum_b2")


def _pairwise(lanes: np.ndarray) -> np.ndarray:
    while lanes.shape[-1] > 1:
        lanes = lanes[..., 0::2] + lanes[..., 1::2]
    return lanes[..., 0]


def canonical_sums(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """The four sums of the kernel, in its order, with NumPy (sequential adds along axis 0 of a 2-D array)."""
    t = a.dtype.type
    lanes = 64 // a.dtype.itemsize
    total = dict.fromkeys(SUMS, 0.0)
    for lo in range(0, max(len(a), 1), PIECE):
        piece = dict.fromkeys(SUMS, 0.0)
        for blo in range(lo, min(lo + PIECE, len(a)), BLOCK):
            x, y = a[blo : blo + BLOCK], b[blo : blo + BLOCK]
            d = x - y
            pad = -len(x) % lanes  # +0.0 added to a lane leaves it as it is (no lane sum here is -0.0)
            terms = {"sum_abs": np.abs(d), "sum_d2": d * d, "sum_a2": x * x, "sum_b2": y * y}
            for name, v in terms.items():
                grid = np.concatenate([v, np.zeros(pad, dtype=v.dtype)]).reshape(-1, lanes)
                block = _pairwise(np.add.reduce(grid, axis=0, dtype=t)[None, :])[0]
                piece[name] = piece[name] + float(block)
        for name in SUMS:
            total[name] = total[name] + piece[name]
    return total


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 896, 1023, 1024, 1025, 5000, 151_936, 2 * PIECE + 4099])
def test_the_sums_are_those_of_the_fixed_order(dtype, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = (a + rng.standard_normal(n).astype(dtype) * dtype(1e-3)).astype(dtype)
    want = canonical_sums(a, b)
    got = kernels.diff_sums(a, b)
    for name in SUMS:
        assert getattr(got, name) == want[name], (name, getattr(got, name), want[name])
    # With the rank taken in the same read (large pairs: workers sum whole pieces and stretches), the same.
    sums, _ = kernels.diff_sums_and_quantile(a, b, 0.99)
    for name in SUMS:
        assert getattr(sums, name) == want[name], name


CHILD = """
import json, numpy as np
from orchlog import kernels
rng = np.random.default_rng(3)
out = {}
for n in (896, 151936, 3 * (1 << 21) + 5):
    for dt in (np.float32, np.float64):
        a = rng.standard_normal(n).astype(dt)
        b = (a + rng.standard_normal(n).astype(dt) * dt(1e-3)).astype(dt)
        s, q = kernels.diff_sums_and_quantile(a, b, 0.99)
        out[f"{n}/{dt.__name__}"] = [float(v).hex() for v in (s.sum_abs, s.sum_d2, s.sum_a2, s.sum_b2, s.max_abs, q)]
print(json.dumps(out))
"""


def test_every_vector_width_gives_the_same_bits():
    """Each width the machine runs (ORCHLOG_ISA caps the kernels as on a machine without the wider ones)."""
    seen = {}
    for isa in ("avx512", "avx2", "sse4", "baseline"):
        env = {**os.environ, "ORCHLOG_ISA": isa}
        out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
        seen[isa] = json.loads(out.stdout)
    assert all(v == seen["baseline"] for v in seen.values()), {k: v == seen["baseline"] for k, v in seen.items()}
