"""Random weights: reproducible from the seed, shaped and typed as the model says."""

from __future__ import annotations

import numpy as np

from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.weights import make_weights, tensor_shapes


def test_the_same_seed_gives_the_same_weights_bit_for_bit():
    a, b = make_weights(seed=7), make_weights(seed=7)
    assert all(np.array_equal(a[name], b[name]) for name in a)


def test_another_seed_gives_other_weights():
    a, b = make_weights(seed=7), make_weights(seed=8)
    assert not np.array_equal(a["blk.0.attn_q.weight"], b["blk.0.attn_q.weight"])


def test_every_tensor_is_float32_in_its_declared_shape():
    weights = make_weights()
    assert list(weights) == list(tensor_shapes(TINY))
    for name, shape in tensor_shapes(TINY).items():
        assert weights[name].dtype == np.float32, name
        assert weights[name].shape == shape, name


def test_the_model_has_qkv_biases_and_its_own_output_matrix():
    weights = make_weights()
    for layer in range(TINY.n_layer):
        assert weights[f"blk.{layer}.attn_q.bias"].shape == (TINY.n_embd,)
        assert weights[f"blk.{layer}.attn_k.bias"].shape == (TINY.n_head_kv * TINY.head_dim,)
    assert not TINY.tie_word_embeddings
    assert weights["output.weight"].shape == (TINY.n_vocab, TINY.n_embd)
