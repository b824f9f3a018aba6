"""attach() on the tiny HF Qwen2 of the examples: prompt pass and cached decode steps get their
steps and positions, tuple outputs and inputs are logged, and the logits do not change."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import orchlog
import orchlog.torch
from examples.qwen2_tiny.hf_model import load_hf_model
from examples.qwen2_tiny.make_model import make_tiny_model
from examples.qwen2_tiny.run_hf import run_hf
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from tests.tracegen import tensor_of

pytestmark = pytest.mark.slow  # imports torch and transformers


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny-qwen2.gguf")


@pytest.fixture(scope="module")
def model(tiny_gguf):
    return load_hf_model(tiny_gguf)


def test_each_forward_call_is_a_step_and_cached_tokens_continue_the_positions(model, tiny_gguf, trace):
    with orchlog.torch.attach(model, ["model.layers.*"]):
        run_hf(tiny_gguf, model=model)
    got = [(r.step, r.token_idx) for r in orchlog.open_trace(trace) if r.checkpoint == "model.layers.1"]
    assert got == [(call.step, p) for call in DEFAULT_SCENARIO.calls() for p in call.positions]


def test_positions_follow_the_kv_cache_passed_in(model, trace):
    cache = None
    with orchlog.torch.attach(model, ["lm_head"]), torch.no_grad():
        cache = model(input_ids=torch.tensor([[1, 2, 3]]), use_cache=True).past_key_values
        model(input_ids=torch.tensor([[4, 5]]), past_key_values=cache, use_cache=True)
    assert [(r.step, r.token_idx) for r in orchlog.open_trace(trace)] == [(0, 0), (0, 1), (0, 2), (1, 3), (1, 4)]


def test_the_attention_modules_tuple_output_and_o_projs_input_are_logged(model, tiny_gguf, trace):
    with orchlog.torch.attach(model, ["model.layers.0.self_attn"], inputs=["**.o_proj"]):
        run_hf(tiny_gguf, DEFAULT_SCENARIO.as_one_pass(), model=model)
    records = list(orchlog.open_trace(trace))
    attn = [r for r in records if r.checkpoint == "model.layers.0.self_attn"]
    o_proj_in = [r for r in records if r.checkpoint == "model.layers.0.self_attn.o_proj"]
    assert len(attn) == DEFAULT_SCENARIO.n_positions and attn[0].shape == (64,)
    assert {r.stage for r in o_proj_in} == {"input"} and len(o_proj_in) == DEFAULT_SCENARIO.n_positions


def test_hooks_change_no_logit(model, tiny_gguf, trace):
    plain = run_hf(tiny_gguf, model=model)
    with orchlog.torch.attach(model):
        hooked = run_hf(tiny_gguf, model=model)
    assert np.array_equal(plain, hooked)


def test_attention_probabilities_are_logged_per_query_token_as_heads_by_keys(model, tiny_gguf, trace):
    with orchlog.torch.attach(model, [], attention=True):
        run_hf(tiny_gguf, model=model)
    probs = [r for r in orchlog.open_trace(trace) if r.stage == "probs" and r.layer == 1]
    got = [(r.step, r.token_idx, r.shape) for r in probs]
    n_head = model.config.num_attention_heads
    assert got == [(c.step, p, (n_head, c.positions[-1] + 1)) for c in DEFAULT_SCENARIO.calls() for p in c.positions]
    rows = np.stack([tensor_of(r) for r in probs[:8]])  # the prompt pass: causal, each row sums to 1
    assert np.allclose(rows.sum(axis=-1), 1.0, atol=1e-6) and (rows[0][:, 1:] == 0).all()


def test_each_record_of_a_token_row_carries_its_token_id(model, tiny_gguf, trace):
    with orchlog.torch.attach(model, ["lm_head"]):
        run_hf(tiny_gguf, model=model)
    ids = [r.token_id for r in orchlog.open_trace(trace)]
    assert ids == list(DEFAULT_SCENARIO.prompt + DEFAULT_SCENARIO.decode)


def test_the_kv_cache_each_call_returns_is_logged_as_hf_holds_it(model, tiny_gguf, trace):
    with orchlog.torch.attach(model, [], cache=True):
        run_hf(tiny_gguf, model=model)
    cache = [(r.step, r.layer, r.stage, r.token_idx, r.shape) for r in orchlog.open_trace(trace)]
    kv_heads, head_dim = model.config.num_key_value_heads, model.config.hidden_size // model.config.num_attention_heads
    expected = [
        (c.step, layer, stage, None, (1, kv_heads, c.positions[-1] + 1, head_dim))
        for c in DEFAULT_SCENARIO.calls()
        for layer in range(model.config.num_hidden_layers)
        for stage in ("key", "value")
    ]
    assert cache == expected
