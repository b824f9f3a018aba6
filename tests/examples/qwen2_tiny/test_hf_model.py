"""The HF model holds exactly the GGUF's weights, under HF's names."""

from __future__ import annotations

import numpy as np
import pytest

from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.weights import make_weights

pytestmark = pytest.mark.slow  # imports torch and transformers


def test_every_hf_parameter_equals_its_gguf_tensor(tiny_gguf):
    from examples.qwen2_tiny.hf_model import load_hf_model

    weights = make_weights()
    state = load_hf_model(tiny_gguf).state_dict()
    expected = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.layers.1.input_layernorm.weight": "blk.1.attn_norm.weight",
        "model.layers.1.self_attn.q_proj.weight": "blk.1.attn_q.weight",
        "model.layers.1.self_attn.q_proj.bias": "blk.1.attn_q.bias",
        "model.layers.1.self_attn.k_proj.bias": "blk.1.attn_k.bias",
        "model.layers.1.self_attn.o_proj.weight": "blk.1.attn_output.weight",
        "model.layers.1.post_attention_layernorm.weight": "blk.1.ffn_norm.weight",
        "model.layers.1.mlp.gate_proj.weight": "blk.1.ffn_gate.weight",
        "model.layers.1.mlp.down_proj.weight": "blk.1.ffn_down.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    for hf_name, gguf_name in expected.items():
        assert np.array_equal(state[hf_name].numpy(), weights[gguf_name]), hf_name
    # Untied: every GGUF tensor is used exactly once.
    assert len(state) == len(weights)


def test_the_hf_config_matches_the_tiny_model():
    from examples.qwen2_tiny.hf_model import hf_config

    config = hf_config(TINY)
    assert (config.hidden_size, config.num_attention_heads, config.num_key_value_heads) == (64, 4, 2)
    assert config.rope_parameters is not None and config.rope_parameters["rope_theta"] == TINY.rope_theta
    assert config.rms_norm_eps == TINY.rms_norm_eps
    assert config.tie_word_embeddings is False
