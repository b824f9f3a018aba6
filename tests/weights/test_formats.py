"""Reading weights: safetensors (against the safetensors package's own writer), GGUF (dequantized), .npz."""

from __future__ import annotations

import json

import gguf
import numpy as np
import pytest
from safetensors.numpy import save_file

from orchlog.errors import OrchlogError
from orchlog.weights.source import open_weights
from tests.weights.models import gguf_weights, write_gguf


def test_safetensors_written_by_the_package_read_back_exactly(tmp_path):
    arrays: dict[str, np.ndarray] = {
        "a": np.arange(12, dtype=np.float32).reshape(3, 4),
        "b": np.linspace(-1, 1, 7).astype(np.float16),
    }
    save_file(arrays, str(tmp_path / "m.safetensors"))
    src = open_weights(tmp_path / "m.safetensors")
    assert src.format == "safetensors" and src.tensors["b"].dtype == "f16" and src.tensors["a"].shape == (3, 4)
    assert np.array_equal(src.load("a"), arrays["a"])
    assert np.array_equal(src.load("b"), arrays["b"].astype(np.float32))


def _write_raw_safetensors(path, name, dtype, shape, data: bytes):
    header = json.dumps({name: {"dtype": dtype, "shape": list(shape), "data_offsets": [0, len(data)]}}).encode()
    path.write_bytes(len(header).to_bytes(8, "little") + header + data)


def test_bfloat16_is_widened_exactly(tmp_path):
    values = np.array([1.0, -2.5, 3.140625], dtype=np.float32)
    bits = (values.view(np.uint32) >> 16).astype("<u2")
    _write_raw_safetensors(tmp_path / "bf.safetensors", "w", "BF16", (3,), bits.tobytes())
    assert open_weights(tmp_path / "bf.safetensors").load("w").tolist() == [1.0, -2.5, 3.140625]


def test_a_safetensors_header_that_lies_about_its_size_is_an_error(tmp_path):
    _write_raw_safetensors(tmp_path / "bad.safetensors", "w", "F32", (4,), b"\0" * 12)
    with pytest.raises(OrchlogError, match="12 bytes for shape"):
        open_weights(tmp_path / "bad.safetensors")


def test_gguf_tensors_come_in_numpy_order_and_quantized_ones_dequantized(tmp_path):
    w = gguf_weights()
    path = write_gguf(tmp_path / "m.gguf", w, quantize={"blk.0.ffn_up.weight": gguf.GGMLQuantizationType.Q8_0})
    src = open_weights(path)
    assert (src.format, src.arch, src.n_head, src.n_head_kv) == ("gguf", "qwen2", 4, 2)
    assert src.tensors["blk.0.ffn_up.weight"].dtype == "q8_0"
    assert np.array_equal(src.load("blk.0.ffn_down.weight"), w["blk.0.ffn_down.weight"])
    up = src.load("blk.0.ffn_up.weight")
    assert up.shape == w["blk.0.ffn_up.weight"].shape
    assert 0 < np.abs(up - w["blk.0.ffn_up.weight"]).max() < 0.01  # Q8_0 keeps 8 bits per weight


def test_npz_is_read_without_pickle(tmp_path):
    np.savez(tmp_path / "w.npz", a=np.ones((2, 2), dtype=np.float32), b=np.arange(3))
    src = open_weights(tmp_path / "w.npz")
    assert src.format == "npz" and src.load("b").dtype == np.float64
    np.savez(tmp_path / "obj.npz", a=np.array([{"x": 1}], dtype=object))
    with pytest.raises(OrchlogError, match="pickle"):
        open_weights(tmp_path / "obj.npz")


def test_a_directory_of_shards_reads_its_config_heads(tmp_path):
    save_file({"x": np.zeros(2, dtype=np.float32)}, str(tmp_path / "model-00001-of-00002.safetensors"))
    save_file({"y": np.ones(2, dtype=np.float32)}, str(tmp_path / "model-00002-of-00002.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "num_attention_heads": 8}))
    src = open_weights(tmp_path)
    assert set(src.tensors) == {"x", "y"} and (src.arch, src.n_head, src.n_head_kv) == ("llama", 8, 8)


def test_anything_else_is_refused_with_one_line(tmp_path):
    (tmp_path / "x.bin").write_bytes(b"hello world")
    with pytest.raises(OrchlogError, match="not a GGUF, safetensors or .npz"):
        open_weights(tmp_path / "x.bin")
    with pytest.raises(OrchlogError, match="does not exist"):
        open_weights(tmp_path / "missing")
