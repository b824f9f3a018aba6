"""orchlog weights: pairs by name, grades with compare's tolerances, names what matches only rearranged."""

from __future__ import annotations

import json

import gguf
import numpy as np

from orchlog.report import render_text
from orchlog.weights import WeightsOptions, compare_weights
from tests.weights.models import N_EMBD, gguf_weights, llama_gguf_weights, write_gguf, write_hf


def _rows(report):
    return {r.name_a: r for r in report.rows}


def test_a_gguf_and_its_hf_safetensors_match_weight_for_weight(tmp_path):
    w = gguf_weights()
    report = compare_weights(write_gguf(tmp_path / "m.gguf", w), write_hf(tmp_path / "m.safetensors", w))
    assert report.status == "ok" and report.exit_code == 0 and len(report.rows) == len(w)
    assert report.map == "qwen2 (shipped)" and report.counts()["exact"] == len(w)


def test_a_corrupted_bias_and_a_transposed_matrix_are_both_named(tmp_path):
    w = gguf_weights()
    bad = dict(w)
    bad["blk.0.attn_k.bias"] = w["blk.0.attn_k.bias"] + np.eye(1, w["blk.0.attn_k.bias"].size, 3).ravel() * 0.2
    bad["blk.1.attn_output.weight"] = np.ascontiguousarray(w["blk.1.attn_output.weight"].T)
    bad["blk.1.ffn_down.weight"] = np.ascontiguousarray(w["blk.1.ffn_down.weight"].T)
    report = compare_weights(write_gguf(tmp_path / "m.gguf", w), write_hf(tmp_path / "bad.safetensors", bad))
    assert report.exit_code == 1
    rows = _rows(report)
    assert {r.name_a for r in report.failing()} == {
        "blk.0.attn_k.bias",
        "blk.1.attn_output.weight",
        "blk.1.ffn_down.weight",
    }
    assert rows["blk.0.attn_k.bias"].relation == "as_stored" and rows["blk.0.attn_k.bias"].tier == "fail"
    assert rows["blk.0.attn_k.bias"].signatures[0].kind == "localized"
    assert rows["blk.1.attn_output.weight"].relation == "transposed"  # square: same shape, other layout
    assert rows["blk.1.ffn_down.weight"].relation == "transposed"  # the shapes differ too
    text = render_text(report)
    assert "blk.1.ffn_down.weight (b: model.layers.1.mlp.down_proj.weight)" in text
    assert "matches only transposed" in text and "2 match only transposed or permuted" in text


def test_a_llama_gguf_is_compared_after_the_converters_q_k_permutation(tmp_path):
    hf = gguf_weights(biases=False)
    report = compare_weights(
        write_gguf(tmp_path / "llama.gguf", llama_gguf_weights(hf), arch="llama"),
        write_hf(tmp_path / "hf.safetensors", hf, gguf.MODEL_ARCH.LLAMA),
    )
    assert report.status == "ok"
    assert {r.layout for r in report.rows if ".attn_q." in r.name_a or ".attn_k." in r.name_a} == {"llama_qk_permuted"}


def test_a_llama_gguf_written_without_the_permutation_is_named_so(tmp_path):
    hf = gguf_weights(biases=False)
    report = compare_weights(
        write_gguf(tmp_path / "llama.gguf", hf, arch="llama"),
        write_hf(tmp_path / "hf.safetensors", hf, gguf.MODEL_ARCH.LLAMA),
    )
    moved = {r.name_a: r.relation for r in report.failing()}
    assert set(moved) == {f"blk.{i}.attn_{p}.weight" for i in range(2) for p in "qk"}
    assert set(moved.values()) == {"qk_unpermuted"}


def test_the_hf_side_may_come_first(tmp_path):
    hf = gguf_weights(biases=False)
    report = compare_weights(
        write_hf(tmp_path / "hf.safetensors", hf, gguf.MODEL_ARCH.LLAMA),
        write_gguf(tmp_path / "l.gguf", llama_gguf_weights(hf), arch="llama"),
    )
    assert report.status == "ok" and not any(r.name_a.startswith("blk.") for r in report.rows)


def test_rows_in_another_order_and_a_misread_shape(tmp_path):
    w = gguf_weights()
    bad = dict(w)
    bad["token_embd.weight"] = w["token_embd.weight"][::-1].copy()
    bad["blk.0.ffn_up.weight"] = w["blk.0.ffn_up.weight"].reshape(N_EMBD, -1).copy()  # same bytes, dims reversed
    rows = _rows(compare_weights(write_gguf(tmp_path / "m.gguf", w), write_hf(tmp_path / "b.safetensors", bad)))
    assert rows["token_embd.weight"].relation == "rows_permuted"
    assert rows["blk.0.ffn_up.weight"].relation == "reshaped"


def test_a_type_without_a_quantization_bound_needs_a_looser_threshold(tmp_path):
    # f16 has no per-block bound (quant_bound.py covers the simple block types): the tolerance decides it.
    w = gguf_weights()
    half = {name: gguf.GGMLQuantizationType.F16 for name, arr in w.items() if arr.ndim == 2}
    a, b = write_gguf(tmp_path / "f16.gguf", w, quantize=half), write_hf(tmp_path / "f32.safetensors", w)
    strict = compare_weights(a, b, WeightsOptions(threshold=1e-6))
    assert strict.status == "diverged" and all(r.relation == "as_stored" for r in strict.failing())
    assert compare_weights(a, b, WeightsOptions(threshold=1e-2)).status == "ok"


def test_names_only_on_one_side_are_listed_and_nothing_paired_is_no_match(tmp_path):
    w = gguf_weights()
    extra = {**w, "rope_freqs.weight": np.ones(4, dtype=np.float32)}
    report = compare_weights(write_gguf(tmp_path / "m.gguf", extra), write_hf(tmp_path / "m.safetensors", w))
    assert report.only_a == ["rope_freqs.weight"] and report.status == "ok"
    np.savez(tmp_path / "other.npz", unrelated=np.zeros(3))
    none = compare_weights(tmp_path / "other.npz", tmp_path / "other.npz", WeightsOptions(map="qwen2"))
    assert none.status == "no_match" and none.exit_code == 1


def test_the_json_has_stable_keys(tmp_path):
    w = gguf_weights()
    report = compare_weights(write_gguf(tmp_path / "m.gguf", w), write_hf(tmp_path / "m.safetensors", w))
    doc = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert set(doc) == {"report", "status", "inputs", "map", "tolerances", "counts", "weights", "only_in"}
    assert doc["report"] == "orchlog-weights/1" and doc["counts"]["relations"] == {"as_stored": len(w)}
    assert set(doc["weights"][0]) == {
        "names",
        "shapes",
        "dtypes",
        "layout",
        "relation",
        "relation_means",
        "tier",
        "metric",
        "value",
        "rule",
        "reason",
        "metrics",
        "signatures",
    }
