"""`trace_hf` (orchlog trace hf) on the tiny Qwen2's HF directory: the checkpoint's own tokenizer, greedy
decoding with the KV cache, records under llama.cpp's names (attention rows cut to their causal window), a
header that says what made the run, and nothing read from the network."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import orchlog
from orchlog.errors import OrchlogError
from orchlog.maps.namemap import load_maps
from orchlog.torch.trace import hooked_modules, trace_hf
from tests.tracegen import tensor_of

pytestmark = pytest.mark.slow  # loads transformers

PROMPT = "The quick brown fox, 12 dogs!"


@pytest.fixture(scope="module")
def traced(model_pair, tmp_path_factory):
    return trace_hf(model_pair.hf, tmp_path_factory.mktemp("hf") / "hf.bin", text=PROMPT, n_predict=3)


def test_the_prompt_is_the_checkpoints_tokenization_and_decoding_is_greedy(traced, model_pair):
    from transformers import AutoTokenizer

    assert traced.prompt == AutoTokenizer.from_pretrained(model_pair.hf)(PROMPT)["input_ids"]
    records = list(orchlog.open_trace(traced.path))
    logits = {(r.step, r.token_idx): tensor_of(r) for r in records if r.checkpoint == "result_output"}
    for step, token in enumerate(traced.decode):
        assert int(np.argmax(logits[step, len(traced.prompt) - 1 + step])) == token
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_every_record_carries_a_llama_cpp_name_and_attention_rows_their_causal_window(traced):
    records = list(orchlog.open_trace(traced.path))
    names = {r.checkpoint for r in records}
    assert names == {
        "embd", "attn_norm", "Qcur", "Kcur", "Vcur", "kqv_out", "attn_out", "ffn_inp", "ffn_norm", "ffn_gate",
        "ffn_up", "ffn_swiglu", "ffn_out", "l_out", "result_norm", "result_output", "kq_soft_max",
    }  # fmt: skip
    probs = [r for r in records if r.checkpoint == "kq_soft_max"]
    assert probs and all(
        r.token_idx is not None and r.shape == (4, r.token_idx + 1) for r in probs
    )  # 4 heads, keys 0..token
    assert {r.stage for r in records if r.checkpoint == "Qcur"} == {"add"}


def test_the_header_says_what_made_the_run_under_the_keys_llama_cpps_trace_uses(traced, model_pair):
    config = orchlog.open_trace(traced.path)
    next(iter(config))
    assert config.header is not None
    c = config.header["config"]
    assert (c["engine"], c["model.arch"], c["model.weights"]) == ("transformers", "qwen2", "f32")
    assert (c["model.n_layer"], c["model.n_vocab"], c["model.rope_freq_base"]) == (2, 320, 1e6)
    assert c["prompt.tokens"] == ",".join(map(str, traced.prompt)) and c["prompt.add_bos"] is False
    assert (c["run.sampling"], c["run.n_predict"]) == ("greedy", 3)
    assert len(c["hf.weights_blake3"]) == 64 and "transformers.version" in c


def test_the_map_of_the_model_type_says_which_modules_are_hooked():
    outputs, inputs, probs = hooked_modules(load_maps(["hf_qwen2"]))
    assert "model.layers.*.mlp.up_proj" in outputs and "lm_head" in outputs
    assert inputs == [
        "model.layers.*.self_attn.o_proj",
        "model.layers.*.post_attention_layernorm",
        "model.layers.*.mlp.down_proj",
    ]
    assert probs == ["model.layers.*.self_attn"]


def test_a_model_type_with_no_shipped_map_asks_for_one(model_pair, tmp_path):
    odd = tmp_path / "odd"
    odd.mkdir()
    config = json.loads((model_pair.hf / "config.json").read_text())
    (odd / "config.json").write_text(json.dumps({**config, "model_type": "orchlog_test_type"}))
    with pytest.raises(OrchlogError, match="no shipped name map for model type .orchlog_test_type..*give --map FILE"):
        trace_hf(odd, tmp_path / "x.bin", text="Hi")


def test_a_directory_without_a_config_is_refused(tmp_path):
    with pytest.raises(OrchlogError, match="not a transformers checkpoint directory"):
        trace_hf(tmp_path, tmp_path / "x.bin", text="Hi")
