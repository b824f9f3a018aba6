"""The shared statistics: the noise null, effective counts and named factors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchlog.diagnose.stats import at_most_p, effective_count, explained_p, nice_factor, relative_energy


def test_the_noise_null_agrees_with_a_simulation():
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((20000, 12))
    share = noise[:, 0] ** 2 / (noise**2).sum(axis=1)  # one direction of twelve
    for level in (0.2, 0.5):
        assert explained_p(level, 1, 12) == pytest.approx((share >= level).mean(), abs=0.01)
        assert at_most_p(level, 1, 12) == pytest.approx((share <= level).mean(), abs=0.01)


def test_a_fit_that_explains_nearly_everything_of_many_numbers_is_not_noise():
    assert explained_p(1 - 1e-9, 1, 64) < 1e-100
    assert explained_p(0.02, 1, 64) > 0.1  # about 1/64 of it is what noise gives a one-parameter fit
    assert explained_p(0.9, 1, 1) == 1.0  # one number: no evidence at all


def test_the_effective_count_sees_through_outliers():
    assert effective_count(np.ones(100)) == pytest.approx(100)
    assert effective_count(np.r_[np.full(2, 100.0), np.full(98, 0.01)]) < 2.1


def test_relative_energy_weighs_an_outlier_channel_by_its_size():
    r = np.r_[np.full(10, 1.0), 1000.0]
    e = relative_energy(r, r * (1 + 1e-3))
    assert e[-1] / e[0] < 1e-3 * 1000.0**2  # plain squared differences would differ by 1e6
    per_element = relative_energy(r, r * (1 + 1e-3), typical=np.abs(r))
    assert per_element[-1] == pytest.approx(per_element[0])


@pytest.mark.parametrize(
    "factor, name",
    [(0.125, "1/sqrt(64)"), (2.0, "2"), (-2.0, "-2"), (1 / math.sqrt(128), "1/sqrt(128)"), (8.0, "sqrt(64)")],
)
def test_factors_are_named_when_they_are_a_power_of_two_or_a_head_root(factor, name):
    assert nice_factor(factor) == name


def test_an_ordinary_factor_has_no_name():
    assert nice_factor(1.37) is None and nice_factor(0.0) is None and nice_factor(math.inf) is None


def test_the_head_size_in_the_shape_comes_first():
    assert nice_factor(math.sqrt(80), head_dims=(80,)) == "sqrt(80)"
