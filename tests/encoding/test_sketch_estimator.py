"""The sketch's estimate of ‖a − b‖ stays within its documented band, on random and structured differences.

benchmarks/sketch_error.py runs the same families with many more draws (docs/compare.md has its figures);
here each family gets enough draws that a band failing at 1e-6 would pass unnoticed only by luck, and a
construction whose errors were not χ²₆₄-like (a bad hash, a structure lining up across groups) would not.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import sketch_error
from orchlog.encoding import sketch


@pytest.mark.parametrize("fill, sizes, share", sketch_error.FAMILIES, ids=lambda f: getattr(f, "__name__", None))
def test_no_draw_of_any_family_leaves_the_band(fill, sizes, share):
    r = sketch_error.ratios(fill, sizes, max(200, int(4000 * share)), np.random.default_rng(7))
    lo, hi = sketch.ESTIMATE_BAND
    assert r.min() >= lo and r.max() <= hi, (r.min(), r.max())


def test_random_differences_follow_chi_square_64():
    r = sketch_error.ratios(sketch_error.gaussian, (896, 4096), 20000, np.random.default_rng(8))
    for p in (1e-3, 1e-2, 0.5, 0.99, 0.999):
        model = sketch.chi2_quantile(p) / sketch.ROWS
        # The empirical quantile's own spread at n = 20000, with room for the lighter tails of ±1 signs.
        assert abs(np.quantile(r, p) - model) < 0.03, (p, np.quantile(r, p), model)
    assert abs(r.mean() - 1) < 0.01  # unbiased: E[D²] = ‖a − b‖²
