"""The name maps shipped in orchlog/maps/: llama.cpp's suffixed graph names and HF module paths meet
on the canonical names (llama.cpp's names without the suffix, as the ggml adapter writes them)."""

from __future__ import annotations

import pytest

from examples.numpy_engine.observe import AFTER_BLOCKS, BEFORE_BLOCKS, PER_BLOCK
from orchlog.compare.namemap import load_maps, shipped_maps

# What HF cannot observe as a module's output or input (see hf_qwen2.toml).
NOT_IN_HF = {("Qcur", "rope"), ("Kcur", "rope"), ("kq", None)}
CANONICAL_STAGES = [*BEFORE_BLOCKS, *PER_BLOCK, *AFTER_BLOCKS]


@pytest.mark.parametrize("name", shipped_maps())
def test_every_shipped_map_loads(name):
    assert load_maps([name]).rules


def test_suffixed_llama_cpp_names_become_canonical_names_and_layers():
    names = load_maps(["llama_cpp"])
    assert names.lookup("attn_norm-3") == ("attn_norm", 3, None)
    assert names.lookup("Qcur-0", "rope") == ("Qcur", 0, "rope")
    assert names.lookup("result_norm") is None  # already canonical


def _hf_qwen2_paths(layer: int) -> dict[tuple[str, str | None], tuple[str, str | None]]:
    """(checkpoint, stage) as orchlog.torch logs them -> the canonical (checkpoint, stage) they stand for."""
    block = f"model.layers.{layer}"
    return {
        ("model.embed_tokens", None): ("embd", None),
        (f"{block}.input_layernorm", None): ("attn_norm", None),
        (f"{block}.self_attn.q_proj", None): ("Qcur", "add"),
        (f"{block}.self_attn.k_proj", None): ("Kcur", "add"),
        (f"{block}.self_attn.v_proj", None): ("Vcur", "add"),
        (f"{block}.self_attn", "probs"): ("kq_soft_max", None),
        (f"{block}.self_attn.o_proj", "input"): ("kqv_out", None),
        (f"{block}.self_attn.o_proj", None): ("attn_out", None),
        (f"{block}.post_attention_layernorm", "input"): ("ffn_inp", None),
        (f"{block}.post_attention_layernorm", None): ("ffn_norm", None),
        (f"{block}.mlp.gate_proj", None): ("ffn_gate", None),
        (f"{block}.mlp.up_proj", None): ("ffn_up", None),
        (f"{block}.mlp.down_proj", "input"): ("ffn_swiglu", None),
        (f"{block}.mlp", None): ("ffn_out", None),
        (block, None): ("l_out", None),
        ("model.norm", None): ("result_norm", None),
        ("lm_head", None): ("result_output", None),
    }


def test_hf_qwen2_module_paths_map_onto_every_stage_hf_can_observe():
    names = load_maps(["hf_qwen2"])
    expected = _hf_qwen2_paths(layer=7)
    for (path, stage), (checkpoint, canonical_stage) in expected.items():
        mapped = names.lookup(path, stage)
        layer = 7 if path.startswith("model.layers.") else None
        assert mapped == (checkpoint, layer, canonical_stage), (path, stage)
    assert set(expected.values()) == set(CANONICAL_STAGES) - NOT_IN_HF


def test_hf_llama_leaves_out_the_projections_llama_cpp_stores_permuted():
    names = load_maps(["hf_llama"])
    assert names.lookup("model.layers.2.self_attn.q_proj") is None
    assert names.lookup("model.layers.2.self_attn.k_proj") is None
    assert names.lookup("model.layers.2.self_attn.v_proj") == ("Vcur", 2, None)  # no bias: llama.cpp's MUL_MAT
    assert names.lookup("model.layers.2.self_attn.o_proj", "input") == ("kqv_out", 2, None)
