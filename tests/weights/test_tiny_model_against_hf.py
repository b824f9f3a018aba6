"""The tiny Qwen2's GGUF against the safetensors HF transformers writes for the same model: every weight
matches; with one bias corrupted and one matrix transposed in the HF checkpoint, both are named."""

from __future__ import annotations

import pytest

from orchlog.report import render_text
from orchlog.weights import compare_weights

pytestmark = pytest.mark.slow  # imports torch and transformers


@pytest.fixture(scope="module")
def model(tiny_gguf):
    from examples.qwen2_tiny.hf_model import load_hf_model

    return load_hf_model(tiny_gguf)


def test_every_weight_of_the_gguf_matches_the_hf_checkpoint(tiny_gguf, model, tmp_path):
    model.save_pretrained(tmp_path)
    report = compare_weights(tiny_gguf, tmp_path)
    assert report.inputs[1].format == "safetensors" and report.inputs[1].arch == "qwen2"
    assert report.status == "ok" and not report.only_a and not report.only_b
    assert report.counts()["exact"] == len(report.rows) == 27


def test_a_corrupted_bias_and_a_transposed_matrix_are_named(tiny_gguf, model, tmp_path):
    import torch

    with torch.no_grad():
        model.model.layers[0].self_attn.v_proj.bias[7] += 0.25
        up = model.model.layers[1].mlp.up_proj
        up.weight = torch.nn.Parameter(up.weight.detach().T.contiguous())
    model.save_pretrained(tmp_path)
    report = compare_weights(tiny_gguf, tmp_path)
    bad = {r.name_a: r for r in report.failing()}
    assert set(bad) == {"blk.0.attn_v.bias", "blk.1.ffn_up.weight"}
    assert bad["blk.0.attn_v.bias"].relation == "as_stored" and bad["blk.0.attn_v.bias"].metrics[
        "max_abs"
    ] == pytest.approx(0.25)
    assert bad["blk.1.ffn_up.weight"].relation == "transposed"
    assert "matches only transposed" in render_text(report) and report.exit_code == 1
