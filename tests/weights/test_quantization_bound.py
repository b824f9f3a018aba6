"""A GGUF quantized from a checkpoint is within its quantization bound of that checkpoint at every weight,
however coarse the type is next to a fixed tolerance; a weight changed by more than the bound is named."""

from __future__ import annotations

import gguf
import numpy as np
import pytest

from orchlog.weights import compare_weights
from orchlog.weights.quant_bound import BLOCKS, bound
from tests.weights.models import gguf_weights, write_gguf, write_hf

Q = gguf.GGMLQuantizationType
MATRICES = ("blk.0.attn_q.weight", "blk.0.ffn_up.weight", "blk.1.ffn_gate.weight", "output.weight")


@pytest.mark.parametrize("kind", ["Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1"])
def test_every_element_of_a_quantized_tensor_is_within_its_bound_and_the_bound_is_tight(kind):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((64, 256)) * rng.choice([0.01, 1.0, 30.0], (64, 1))).astype(np.float32)
    raw = gguf.quants.quantize(x, gguf.GGMLQuantizationType[kind])
    values = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType[kind]).reshape(-1)
    b = bound(raw, kind.lower(), values)
    err = np.abs(values.astype(np.float64) - x.reshape(-1))
    assert b is not None
    assert (err <= b).all()
    assert err.max() / b[np.argmax(err)] > 0.4  # the bound is the rounding's own size, not a loose figure


def _model(tmp_path, scale: float, kind=Q.Q8_0):
    w = {k: v * scale for k, v in gguf_weights(seed=1).items()}
    gguf_path = write_gguf(tmp_path / "q.gguf", w, quantize=dict.fromkeys(MATRICES, kind))
    return w, gguf_path


def test_a_quantized_file_of_large_weights_passes_where_a_fixed_tolerance_fails_it(tmp_path):
    w, quantized = _model(tmp_path, scale=20.0)  # Q8_0 steps of ~0.1: far beyond max_abs 1e-3
    report = compare_weights(write_hf(tmp_path / "hf.safetensors", w), quantized)
    rows = {r.name_b: r for r in report.rows}
    assert report.status == "ok", [(r.name_b, r.reason) for r in report.rows if r.failed]
    for name in MATRICES:
        assert rows[name].metrics["max_abs"] > 1e-3 and rows[name].metrics["quant_ratio"] <= 1
        assert rows[name].reason.startswith("within its quantization") and rows[name].rule == "q8_0 quantization"


def test_one_weight_moved_by_more_than_its_bound_is_named_with_how_far(tmp_path):
    w, quantized = _model(tmp_path, scale=1.0)
    moved = dict(w)
    moved["blk.0.ffn_up.weight"] = w["blk.0.ffn_up.weight"].copy()
    moved["blk.0.ffn_up.weight"][3, 5] += 0.05  # a few steps of its block: the file was not made from this
    report = compare_weights(write_hf(tmp_path / "hf.safetensors", moved), quantized)
    (bad,) = [r for r in report.rows if r.failed]
    assert bad.name_b == "blk.0.ffn_up.weight" and bad.tier == "fail"
    assert "beyond its quantization at 1 of" in bad.reason and bad.metrics["quant_ratio"] > 1


def test_types_without_a_bound_keep_the_tolerance():
    assert "q4_k" not in BLOCKS and "q6_k" not in BLOCKS
    assert bound(np.zeros(144, np.uint8), "q4_k", np.zeros(256)) is None
