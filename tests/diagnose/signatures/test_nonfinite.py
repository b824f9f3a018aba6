"""nonfinite_origin: where NaN or Inf first appear, from finite inputs."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Pair, Side, Where
from orchlog.diagnose.signatures.nonfinite import nonfinite_origin
from tests.diagnose.synthetic import case_of, reference


def _inputs(ours_input: np.ndarray) -> list[Pair]:
    x = reference(tokens=1)[0]
    return [Pair(Where("before"), Side.of(x), Side.of(ours_input))]


def test_an_overflow_from_finite_inputs_starts_here():
    ref = reference(tokens=1) * 1e5
    ours = np.where(np.abs(ref) > 65504, np.inf, ref)
    found = nonfinite_origin(case_of(ref, ours, inputs=_inputs(reference(tokens=1)[0])))
    assert found is not None and found.confidence == 1.0 and found.evidence["inf"] > 0
    assert "beyond float16" in found.message


def test_non_finite_inputs_mean_it_was_inherited():
    ref = reference(tokens=1)
    ours = ref.copy()
    ours[0, 3] = np.nan
    bad_input = reference(tokens=1)[0]
    bad_input[1] = np.nan
    assert nonfinite_origin(case_of(ref, ours, inputs=_inputs(bad_input))) is None


def test_without_inputs_the_claim_is_weaker_and_summaries_use_the_counts():
    ref = reference(tokens=1)
    ours = ref.copy()
    ours[0, 40] = np.nan
    found = nonfinite_origin(case_of(ref, ours, summary=10))
    assert found is not None and found.confidence == 0.6 and found.evidence["nan"] == 1


def test_finite_pairs_claim_nothing():
    ref = reference(tokens=1)
    assert nonfinite_origin(case_of(ref, ref * 2)) is None
