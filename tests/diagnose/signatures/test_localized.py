"""localized: the difference sits in one slice."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.signatures.localized import localized
from tests.diagnose.synthetic import case_of, noisy, reference


def test_one_head_computed_differently_is_named_by_its_index():
    ref = reference(n=128)
    ours = noisy(ref).reshape(6, 8, 16)
    ours[0, 5] += 0.5
    found = localized(case_of(ref, ours.reshape(6, -1), shape=(8, 16)))
    assert found is not None and (found.evidence["axis"], found.evidence["index"]) == (0, 5)


def test_a_run_of_elements_is_named_by_its_bounds():
    ref = reference(n=256)
    ours = noisy(ref)
    ours[:, 100:108] += 1.0
    found = localized(case_of(ref, ours))
    assert found is not None
    # The shortest run holding 95% of the (noise-weighted) difference: inside the planted one, nearly all of it.
    assert 100 <= found.evidence["start"] and found.evidence["stop"] <= 108
    assert found.evidence["stop"] - found.evidence["start"] >= 6


def test_an_outlier_channels_float_noise_is_not_localized():
    ref = reference(n=256)
    ref[:, 7] *= 1000.0
    assert localized(case_of(ref, noisy(ref))) is None
    assert localized(case_of(ref, ref * (1 + 1e-3))) is None  # a uniform relative error


def test_a_spread_error_is_not_localized():
    ref = reference(n=128)
    ours = ref + 0.1 * np.random.default_rng(11).standard_normal(ref.shape)
    assert localized(case_of(ref, ours, shape=(8, 16))) is None
