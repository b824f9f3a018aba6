"""precision: a narrower float's rounding or saturation."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.signatures.precision import precision, representable
from tests.diagnose.synthetic import case_of, noisy, reference


def test_values_rounded_to_float16_are_recognised():
    ref = reference(n=256)
    found = precision(case_of(ref, ref.astype(np.float16).astype(np.float64)))
    assert found is not None and found.evidence["format"] == "f16" and found.evidence["side"] == "ours"


def test_a_reference_in_bfloat16_is_said_to_be_the_rounded_side():
    ours = reference(n=256)
    bits = (ours.astype(np.float32).view(np.uint32) + 0x8000) & 0xFFFF0000
    ref = bits.view(np.float32).astype(np.float64)
    found = precision(case_of(ref, ours))
    assert found is not None and found.evidence["format"] == "bf16" and found.evidence["side"] == "reference"


def test_saturation_at_float16s_largest_value():
    ref = reference(n=64) * 3e4
    ours = np.clip(ref, -65504, 65504)
    found = precision(case_of(ref, ours))
    assert found is not None and found.evidence["limit"] == 65504.0


def test_rounding_level_differences_without_representable_values():
    ref = reference(n=512)
    ulp = np.exp2(np.floor(np.log2(np.abs(ref))) - 10)
    ours = ref + ulp * np.random.default_rng(12).uniform(-0.5, 0.5, ref.shape)
    found = precision(case_of(ref, ours))
    assert found is not None and found.confidence == 0.7


def test_float32_noise_and_a_small_factor_are_not_precision():
    ref = reference(n=256)
    assert precision(case_of(ref, noisy(ref))) is None
    assert precision(case_of(ref, noisy(ref * 1.001))) is None  # an epsilon-sized factor, not rounding


def test_summaries_use_their_leading_values_and_claim_less():
    ref = reference(n=256)
    found = precision(case_of(ref, ref.astype(np.float16).astype(np.float64), summary=10))
    assert found is not None and found.confidence < 0.6


def test_representability():
    v = np.array([1.0, 1.5, 1 + 2**-10, 1 + 2**-11, 3.1])
    assert representable(v, "f16").tolist() == [True, True, True, False, False]
    assert representable(v, "bf16").tolist() == [True, True, False, False, False]
