"""llama.cpp's tensor printout (common/debug.cpp) and its PyTorch twin: summary records of what they print."""

from __future__ import annotations

import numpy as np

from orchlog import open_trace
from tests.read.formats.tools.conftest import compare_exit
from tests.tracegen import tensor_of


def test_the_printout_keys_records_as_orchlogs_ggml_adapter_does(tools):
    trace = open_trace(tools / "llama-eval-callback-clean.txt")
    records = list(trace)
    assert trace.header is not None
    assert trace.header["tool"] == "llama.cpp eval-callback"
    attn_norm = next(r for r in records if r.checkpoint == "attn_norm" and r.layer == 0)
    assert attn_norm.shape == (8, 64) and attn_norm.dtype == "f32" and attn_norm.stage is None
    text = (tools / "llama-eval-callback-clean.txt").read_text().split("attn_norm-0 = ")[1]
    first_row = text.split("[", 3)[3].split("...")[0]
    assert attn_norm.values is not None
    assert attn_norm.values.tolist() == [float(v) for v in first_row.replace(",", " ").split()]
    total = float(text.split("sum = ")[1].split()[0])
    assert attn_norm.stats is not None
    assert (
        attn_norm.meta["sum"] == total
        and attn_norm.stats.mean is not None
        and np.isclose(attn_norm.stats.mean, total / (8 * 64))
    )
    qcur = [r.stage for r in records if r.checkpoint == "Qcur" and r.layer == 0]
    assert qcur[0] is None and "add" in qcur[1:] and "rope" in qcur[1:]  # one name, several ops


def test_clean_printouts_agree_on_their_leading_values_and_the_planted_layer_is_named(tools):
    a = tools / "llama-eval-callback-clean.txt"
    assert compare_exit(a, a, "--quiet")[0] == 0
    code, text = compare_exit(a, tools / "llama-eval-callback-planted.txt")
    assert code == 1 and "ffn_out, layer 1" in text.split("FIRST DIVERGENCE")[1].splitlines()[1]
    assert "the leading values both sides carry" in text


def test_the_pytorch_twin_names_modules_and_their_inputs(tools):
    records = list(open_trace(tools / "pytorch-twin-clean.txt"))
    down = [r for r in records if r.checkpoint == "model.layers.1.mlp.down_proj"]
    assert [r.stage for r in down] == ["input", None] and {r.layer for r in down} == {1}
    assert down[1].values is not None
    assert down[1].shape is not None
    assert down[1].shape == (1, 8, 64) and len(down[1].values) == 3
    code, text = compare_exit(tools / "pytorch-twin-clean.txt", tools / "pytorch-twin-planted.txt")
    assert code == 1 and "model.layers.1.mlp.down_proj, layer 1" in text.split("FIRST DIVERGENCE")[1]


def test_raw_logits_and_token_files_are_found_by_their_words(tools, tmp_path):
    (logits,) = list(open_trace(tools / "llamacpp-model.bin"))
    (ids,) = list(open_trace(tools / "llamacpp-model-tokens.bin"))
    assert (logits.checkpoint, logits.shape, logits.dtype) == ("logits", (256,), "f32")
    np.testing.assert_array_equal(logits.tensor(), np.fromfile(tools / "llamacpp-model.bin", dtype="<f4"))
    assert ids.checkpoint == "input_ids" and tensor_of(ids).tolist() == [0, 17, 42, 99, 128, 200, 7, 255]
    text = tmp_path / "numbers.txt"
    text.write_text("0.5 0.25 1.0\n")
    from orchlog.errors import OrchlogError

    try:
        open_trace(text)
    except OrchlogError as exc:
        assert "not a trace format" in str(exc)
    else:
        raise AssertionError("text was taken for raw logits")
