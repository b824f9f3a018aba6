"""orchlog.distributions: the regularized incomplete beta against its closed forms and a t distribution's
tail, and the noise test's critical correlation it gives (the density's integral, done numerically)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchlog.compare.measuring import noise_ratio
from orchlog.distributions import beta_cdf


@pytest.mark.parametrize("x", [0.05, 0.3, 0.5, 0.9, 0.999])
def test_the_incomplete_beta_matches_its_closed_forms(x):
    assert beta_cdf(x, 1, 1) == pytest.approx(x)
    assert beta_cdf(x, 3, 1) == pytest.approx(x**3)
    assert beta_cdf(x, 1, 4) == pytest.approx(1 - (1 - x) ** 4)
    assert beta_cdf(x, 0.5, 0.5) == pytest.approx(2 / math.pi * math.asin(math.sqrt(x)))


@pytest.mark.parametrize(("m", "c"), [(64, 0.1), (64, 0.3), (64, 0.5639), (8, 0.7), (200, 0.2)])
def test_the_correlation_tail_is_the_densitys_integral(m, c):
    """P(|r| > c) as the integral of (1 - r²)^((m - 3) / 2), by the trapezoid rule on a fine grid."""

    def integral(lo: float) -> float:
        r = np.linspace(lo, 1.0, 400_001)
        f = (1.0 - r * r) ** ((m - 3) / 2)
        return float(np.sum((f[1:] + f[:-1]) / 2) * (r[1] - r[0]))

    assert noise_ratio._tail(c, m) == pytest.approx(integral(c) / integral(0.0), rel=1e-7)


def test_the_critical_correlation_at_one_in_a_million():
    c = noise_ratio.critical_correlation()
    assert noise_ratio._tail(c) == pytest.approx(1e-6, rel=1e-9)
    assert c == pytest.approx(0.56392375745, abs=1e-10)  # as the trapezoid rule over the density had it
