"""GGUF <-> HF name maps, checked against the gguf package's own name table."""

from __future__ import annotations

import gguf
import pytest

from orchlog.weights.names import IDENTITY, choose_map, load_map
from tests.weights.models import gguf_weights, hf_name


@pytest.mark.parametrize("arch, model_arch", [("qwen2", gguf.MODEL_ARCH.QWEN2), ("llama", gguf.MODEL_ARCH.LLAMA)])
def test_every_tensor_maps_both_ways_as_the_gguf_package_says(arch, model_arch):
    m = load_map(arch)
    for name in gguf_weights(biases=arch == "qwen2"):
        assert m.to_hf(name) == hf_name(model_arch, name)
        assert m.to_gguf(hf_name(model_arch, name)) == name


def test_the_map_says_whether_q_and_k_are_permuted():
    assert load_map("llama").qk_permuted and not load_map("qwen2").qk_permuted
    assert (
        load_map("llama").is_qk("blk.3.attn_k.bias") == "k" and load_map("llama").is_qk("blk.3.attn_v.weight") is None
    )


def test_the_map_is_chosen_by_the_gguf_architecture_or_by_the_names():
    gguf_names = list(gguf_weights())
    hf_names = [hf_name(gguf.MODEL_ARCH.QWEN2, n) for n in gguf_names]
    assert choose_map(gguf_names, hf_names, "qwen2", "a").name == "qwen2"
    assert choose_map(gguf_names, hf_names, "unknown-arch", "a").name in ("qwen2", "llama")
    assert choose_map(gguf_names, gguf_names, "qwen2", None) is IDENTITY


def test_a_map_file_of_ones_own_is_read(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('[names]\n"blk.{layer}.wq" = "layers.{layer}.attention.wq.weight"\n')
    m = load_map(str(path))
    assert (
        m.to_hf("blk.7.wq") == "layers.7.attention.wq.weight"
        and m.to_gguf("layers.2.attention.wq.weight") == "blk.2.wq"
    )
