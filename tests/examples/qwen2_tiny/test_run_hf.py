"""The HF reference run: logits of every position, and decoding with the KV
cache gives the logits of one pass over the whole sequence."""

from __future__ import annotations

import numpy as np
import pytest

from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from tests.examples.conftest import AGREEMENT_ATOL, assert_logits_of_every_position

pytestmark = pytest.mark.slow  # imports torch and transformers


def test_logits_cover_every_position_in_float32(hf_logits):
    assert_logits_of_every_position(hf_logits)


def test_cached_decode_steps_match_one_pass_over_all_tokens(tiny_gguf, hf_logits):
    from examples.qwen2_tiny.run_hf import run_hf

    logits = run_hf(tiny_gguf, DEFAULT_SCENARIO.as_one_pass())
    np.testing.assert_allclose(logits, hf_logits, rtol=0, atol=AGREEMENT_ATOL)
