"""The interval of error / noise from sketches: exact where the two differences line up, centred on the plain
estimate, and holding the true ratio as often as its level says on the project's own ±1 sketch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchlog.compare.measuring import noise_ratio
from orchlog.encoding import sketch


def _correlated(rng: np.random.Generator, k: int, n: int, corr: float, ratio: float) -> tuple[np.ndarray, ...]:
    """k pairs (x, y) of n elements with correlation `corr` and ‖x‖ / ‖y‖ near `ratio`."""
    y = rng.standard_normal((k, n))
    x = ratio * (corr * y + math.sqrt(1 - corr * corr) * rng.standard_normal((k, n)))
    return x, y


def test_the_critical_correlation_is_the_t_distributions_with_63_degrees_of_freedom():
    # |r| > c  <=>  |t| > c * sqrt(63 / (1 - c^2)); the two-sided 5% point of t_63 is 1.9983.
    c = noise_ratio.critical_correlation(0.05)
    assert c * math.sqrt(63 / (1 - c * c)) == pytest.approx(1.9983, abs=2e-3)
    assert noise_ratio.critical_correlation() > c  # 1e-6 asks for more


def test_differences_along_the_same_line_give_their_ratio_exactly():
    rng = np.random.default_rng(1)
    y = rng.standard_normal((5, 896))
    sx, sy = sketch.sketch_f64(2.5 * y), sketch.sketch_f64(y)
    lo, hi, usable = noise_ratio.pitman_morgan(sx, sy, np.zeros(5), np.zeros(5))
    assert usable.all()
    np.testing.assert_allclose(lo, 2.5, rtol=1e-7)  # the rounding of the rows' sums, nothing else
    np.testing.assert_allclose(hi, 2.5, rtol=1e-7)


def test_the_interval_is_centred_on_the_plain_estimate():
    rng = np.random.default_rng(2)
    x, y = _correlated(rng, 50, 896, 0.3, 1.7)
    sx, sy = sketch.sketch_f64(x), sketch.sketch_f64(y)
    lo, hi, _ = noise_ratio.pitman_morgan(sx, sy, np.zeros(50), np.zeros(50))
    estimate = np.linalg.norm(sx, axis=1) / np.linalg.norm(sy, axis=1)
    np.testing.assert_allclose(np.sqrt(lo * hi), estimate, rtol=1e-9)


@pytest.mark.parametrize("corr", [0.0, 0.5, 0.9, 0.99])
def test_the_test_holds_the_true_ratio_as_often_as_its_level_says(corr):
    # At level 1e-2 the true ratio falls outside in about 1% of draws; the 1e-6 level used in grading is too
    # rare to see here (benchmarks/noise_ratio_error.py measures it over more draws).
    rng = np.random.default_rng(int(corr * 100) + 3)
    c = noise_ratio.critical_correlation(1e-2)
    misses, draws = 0, 0
    for n in (896, 2048):
        x, y = _correlated(rng, 600, n, corr, 1.0)
        lo, hi, _ = noise_ratio.pitman_morgan(
            sketch.sketch_f64(x), sketch.sketch_f64(y), np.zeros(len(x)), np.zeros(len(x)), c
        )
        true = np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
        misses += int(((true < lo) | (true > hi)).sum())
        draws += len(x)
    assert misses / draws < 0.025, misses / draws


def test_lined_up_differences_give_a_narrower_interval_than_unrelated_ones():
    rng = np.random.default_rng(4)
    widths = {}
    for corr in (0.0, 0.95):
        x, y = _correlated(rng, 200, 896, corr, 0.7)
        lo, hi, _ = noise_ratio.pitman_morgan(sketch.sketch_f64(x), sketch.sketch_f64(y), np.zeros(200), np.zeros(200))
        widths[corr] = float(np.median(hi / lo))
    assert widths[0.95] < 1.6 and widths[0.0] > 2.5, widths


def test_rows_with_too_much_rounding_slack_or_no_size_are_not_used():
    rng = np.random.default_rng(5)
    sx, sy = sketch.sketch_f64(rng.standard_normal((3, 300))), sketch.sketch_f64(rng.standard_normal((3, 300)))
    sy[1] = 0.0
    slack = np.array([0.0, 0.0, 1.0])  # row 2: slack as large as the rows themselves
    lo, hi, usable = noise_ratio.pitman_morgan(sx, sy, slack, np.zeros(3))
    assert usable.tolist() == [True, False, False]
    assert (lo[~usable] == 0).all() and np.isinf(hi[~usable]).all()


def test_bands_divide_the_intervals_and_read_zero_over_zero_as_zero():
    lo, hi = noise_ratio.bands(
        np.array([1.0, 0.0, 2.0]), np.array([2.0, 0.0, 3.0]), np.array([4.0, 0.0, 0.0]), np.array([8.0, 0.0, 0.0])
    )
    assert lo.tolist() == [0.125, 0.0, math.inf]
    assert hi.tolist() == [0.5, 0.0, math.inf]
