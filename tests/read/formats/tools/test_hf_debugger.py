"""HF transformers' model debugger: the call tree with its safetensors, read as orchlog.torch logs a model."""

from __future__ import annotations

import json
import shutil

import numpy as np
from safetensors.numpy import load_file

from orchlog import open_trace
from tests.read.formats.tools.conftest import compare_exit
from tests.tracegen import tensor_of

TREE = "Qwen2ForCausalLM_debug_tree_FULL_TENSORS.json"
SUMMARY = "Qwen2ForCausalLM_debug_tree_SUMMARY.json"


def test_module_paths_lose_the_model_class_and_outputs_split_into_one_record_per_token(tools):
    trace = open_trace(tools / "hf-clean" / TREE)
    records = list(trace)
    assert trace.header is not None
    assert trace.header["tool"] == "hf-model-debugger" and not trace.diagnostics
    down = [r for r in records if r.checkpoint == "model.layers.1.mlp.down_proj" and r.stage is None]
    assert [r.token_idx for r in down] == [0, 1, 2] and {r.layer for r in down} == {1} and {r.step for r in down} == {0}
    assert [r.token_id for r in down] == [3, 1, 4]  # the root's input_ids
    whole = load_file(str(tools / "hf-clean" / "Qwen2ForCausalLM.model.layers.1.mlp.down_proj_outputs.safetensors"))[
        "data"
    ]
    np.testing.assert_array_equal(np.stack([tensor_of(r) for r in down]), whole[0])


def test_inputs_are_read_with_orchlog_torch_stages(tools):
    records = list(open_trace(tools / "hf-clean" / TREE))
    stages = {r.stage for r in records if r.checkpoint == "model.layers.0.self_attn"}
    assert "input.hidden_states" in stages and "input.attention_mask" in stages
    assert any(r.stage == "input" for r in records if r.checkpoint == "model.layers.0.mlp.down_proj")


def test_a_clean_pair_passes_and_the_planted_change_is_named_at_its_module_and_layer(tools, tmp_path):
    twin = tmp_path / "again"
    shutil.copytree(tools / "hf-clean", twin)
    assert compare_exit(tools / "hf-clean", twin, "--quiet")[0] == 0
    code, text = compare_exit(tools / "hf-clean", tools / "hf-planted")
    assert code == 1
    assert "FIRST DIVERGENCE" in text and "model.layers.1.mlp.down_proj, layer 1" in text.split("FIRST DIVERGENCE")[1]


def test_the_summary_alone_gives_statistics_and_beside_the_tree_it_is_not_read_twice(tools, tmp_path):
    summary = list(open_trace(tools / "hf-clean" / SUMMARY))
    r = next(r for r in summary if r.checkpoint == "model.layers.1.mlp.down_proj" and r.stage is None)
    doc = json.loads((tools / "hf-clean" / SUMMARY).read_text())
    assert r.loader is None and r.shape == (1, 3, 8) and r.stats is not None
    assert r.stats.mean is not None and r.stats.min is not None and r.stats.rms is not None
    assert "SUMMARY" in doc["module_path"] or doc["module_path"] == "Qwen2ForCausalLM"
    directory = open_trace(tools / "hf-clean")
    assert directory.format == "hf-debugger" and len(list(directory)) == len(
        list(open_trace(tools / "hf-clean" / TREE))
    )
    assert not directory.diagnostics  # the safetensors files and the summary are the tree's companions
    alone = tmp_path / "summary"
    alone.mkdir()
    shutil.copy(tools / "hf-clean" / SUMMARY, alone)
    assert len(list(open_trace(alone))) == len(summary)


def test_a_missing_tensor_file_is_reported_and_its_statistics_kept(tools, tmp_path):
    copy = tmp_path / "hf"
    shutil.copytree(tools / "hf-clean", copy)
    (copy / "Qwen2ForCausalLM.lm_head_outputs.safetensors").unlink()
    trace = open_trace(copy / TREE)
    lm_head = [r for r in trace if r.checkpoint == "lm_head" and r.stage is None]
    assert len(lm_head) == 1 and lm_head[0].loader is None and lm_head[0].stats is not None
    assert any("lm_head_outputs.safetensors not read" in str(d) for d in trace.diagnostics)
