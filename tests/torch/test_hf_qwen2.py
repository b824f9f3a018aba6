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
