"""The three engines on the tiny Qwen2: llama.cpp (the reference), HF
transformers and the clean NumPy engine agree on every logit of the prompt
pass and of each decode step; every injected bug breaks that agreement."""

from __future__ import annotations

import numpy as np
import pytest

from examples.llama_cpp.run import run_llama_cpp
from examples.numpy_engine.bugs import ALL_BUGS
from examples.numpy_engine.run import run_numpy_engine
from examples.qwen2_tiny.gguf_file import write_gguf
from examples.qwen2_tiny.weights import make_weights, with_llama_qk_permutation
from tests.examples.conftest import AGREEMENT_ATOL

pytestmark = pytest.mark.slow  # builds llama.cpp (cached) and imports torch


def test_hf_agrees_with_llama_cpp(hf_logits, llama_logits):
    np.testing.assert_allclose(hf_logits, llama_logits, rtol=0, atol=AGREEMENT_ATOL)


def test_the_clean_numpy_engine_agrees_with_llama_cpp(numpy_logits, llama_logits):
    np.testing.assert_allclose(numpy_logits, llama_logits, rtol=0, atol=AGREEMENT_ATOL)


def test_the_clean_numpy_engine_agrees_with_hf(numpy_logits, hf_logits):
    np.testing.assert_allclose(numpy_logits, hf_logits, rtol=0, atol=AGREEMENT_ATOL)


def test_all_three_pick_the_same_top_token_at_every_position(numpy_logits, hf_logits, llama_logits):
    top = llama_logits.argmax(axis=-1)
    assert np.array_equal(hf_logits.argmax(axis=-1), top)
    assert np.array_equal(numpy_logits.argmax(axis=-1), top)


@pytest.mark.parametrize("bug", ALL_BUGS, ids=lambda b: b.name.lower())
def test_each_bug_moves_the_numpy_logits_away_from_llama_cpp(tiny_gguf, llama_logits, bug):
    difference = np.abs(run_numpy_engine(tiny_gguf, bugs=bug) - llama_logits).max()
    assert difference > 100 * AGREEMENT_ATOL


def test_llamas_qk_permutation_would_break_the_agreement_from_position_1(tmp_path, hf_logits, run_tokens_program):
    # Shows that the agreement above does check the Q/K layout: the permutation
    # leaves position 0 alone (RoPE rotates by zero there) and nothing else.
    weights = with_llama_qk_permutation(make_weights())
    permuted = run_llama_cpp(write_gguf(tmp_path / "permuted.gguf", weights), program=run_tokens_program)
    difference = np.abs(permuted - hf_logits).max(axis=-1)
    assert difference[0] <= AGREEMENT_ATOL
    assert (difference[1:] > 100 * AGREEMENT_ATOL).all()
