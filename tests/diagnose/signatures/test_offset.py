"""offset: the same difference vector at every token."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.diagnose.signatures.offset import offset
from tests.diagnose.synthetic import case_of, noisy, reference


def test_a_missing_bias_is_an_offset_with_its_norm():
    ref = reference()
    bias = 0.5 * np.random.default_rng(3).standard_normal(64)
    found = offset(case_of(ref, noisy(ref - bias)))
    assert found is not None and found.confidence > 0.99
    assert abs(found.evidence["norm"] - np.linalg.norm(bias)) < 1e-5
    assert "bias" in found.message


def test_one_token_or_alike_references_say_nothing():
    ref = reference()
    bias = np.random.default_rng(3).standard_normal(64)
    assert offset(case_of(ref[:1], noisy(ref[:1] + bias))) is None
    same = np.repeat(ref[:1], 6, axis=0)
    assert offset(case_of(same, noisy(same * 1.5))) is None


def test_noise_and_a_random_error_per_token_are_not_offsets():
    ref = reference()
    assert offset(case_of(ref, noisy(ref))) is None
    assert offset(case_of(ref, ref + np.random.default_rng(4).standard_normal(ref.shape))) is None


def test_on_summaries_three_tokens_are_needed_and_the_claim_is_thinner():
    ref = reference(n=256)
    bias = np.random.default_rng(3).standard_normal(256)
    assert offset(case_of(ref[:2], noisy(ref[:2] + bias), summary=10)) is None
    found = offset(case_of(ref, noisy(ref + bias), summary=10))
    assert found is not None and found.confidence <= 0.6


def test_on_summaries_with_sketches_the_evidence_describes_b_not_the_sketch_rows():
    # Sketches help decide an offset (the sketch of b is the same at every token), but their rows are
    # signed sums: the norm, rms and leading values reported are the leading values' own.
    ref = reference(n=256)
    bias = np.random.default_rng(3).standard_normal(256)
    found = offset(case_of(ref, noisy(ref + bias), summary=10, sketch=True))
    assert found is not None and found.evidence["values"] == 10 and found.evidence["sketch_rows"] == 64
    assert abs(found.evidence["norm"] - np.linalg.norm(bias[:10])) < 1e-3
    assert found.evidence["leading"] == pytest.approx(bias[:8], abs=1e-3)
    assert "and their sketches" in found.message


def test_pairs_with_and_without_sketches_are_compared_on_values_alone():
    ref = reference(n=256)
    bias = np.random.default_rng(3).standard_normal(256)
    case = case_of(ref, noisy(ref + bias), summary=10, sketch=True)
    case.tokens[1].ours.sketch = None
    found = offset(case)
    assert found is not None and found.evidence["sketch_rows"] == 0
