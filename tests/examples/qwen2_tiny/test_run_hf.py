"""The HF reference run: decoding with the KV cache gives the logits of one
pass over the whole sequence."""
from __future__ import annotations

import numpy as np
import pytest

from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario

pytestmark = pytest.mark.slow  # imports torch and transformers


def test_logits_cover_every_position_of_the_scenario(hf_logits):
    assert hf_logits.shape == (DEFAULT_SCENARIO.n_positions, TINY.n_vocab)
    assert hf_logits.dtype == np.float32


def test_cached_decode_steps_match_one_pass_over_all_tokens(tiny_gguf, hf_logits):
    from examples.qwen2_tiny.run_hf import run_hf

    everything_at_once = Scenario(prompt=DEFAULT_SCENARIO.prompt + DEFAULT_SCENARIO.decode, decode=())
    np.testing.assert_allclose(run_hf(tiny_gguf, everything_at_once), hf_logits, rtol=0, atol=1e-5)
