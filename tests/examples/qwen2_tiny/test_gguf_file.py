"""The GGUF file: tensors round-trip exactly, in ggml's layout, with the
metadata llama.cpp's qwen2 loader reads."""

from __future__ import annotations

import gguf
import numpy as np

from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.gguf_file import read_gguf_tensors
from examples.qwen2_tiny.weights import make_weights


def test_tensors_read_back_bit_identical_to_the_weights_written(tiny_gguf):
    written, read = make_weights(), read_gguf_tensors(tiny_gguf)
    assert list(read) == list(written)
    for name in written:
        assert read[name].shape == written[name].shape, name
        assert np.array_equal(read[name], written[name]), name


def test_tensors_are_f32_with_ggml_dimensions_reversed_from_numpy(tiny_gguf):
    tensors = {t.name: t for t in gguf.GGUFReader(str(tiny_gguf)).tensors}
    assert all(t.tensor_type == gguf.GGMLQuantizationType.F32 for t in tensors.values())
    # ggml's ne[0] is the contiguous dimension: n_embd values per token row.
    assert [int(n) for n in tensors["token_embd.weight"].shape] == [TINY.n_embd, TINY.n_vocab]
    assert [int(n) for n in tensors["blk.0.attn_k.weight"].shape] == [TINY.n_embd, TINY.n_embd_kv]


def test_metadata_declares_qwen2_with_no_tokenizer_and_the_config_values(tiny_gguf):
    fields = gguf.GGUFReader(str(tiny_gguf)).fields
    value = lambda key: fields[key].contents()  # noqa: E731
    assert value("general.architecture") == "qwen2"
    assert value("tokenizer.ggml.model") == "none"
    assert value("qwen2.vocab_size") == TINY.n_vocab
    assert value("qwen2.embedding_length") == TINY.n_embd
    assert value("qwen2.block_count") == TINY.n_layer
    assert value("qwen2.attention.head_count") == TINY.n_head
    assert value("qwen2.attention.head_count_kv") == TINY.n_head_kv
    assert value("qwen2.feed_forward_length") == TINY.n_ff
    assert value("qwen2.rope.freq_base") == TINY.rope_theta
    assert np.float32(value("qwen2.attention.layer_norm_rms_epsilon")) == np.float32(TINY.rms_norm_eps)
