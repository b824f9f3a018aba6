"""The name maps shipped in orchlog/maps/: llama.cpp's suffixed graph names and HF module paths meet
on the canonical names (llama.cpp's names without the suffix, as the ggml adapter writes them)."""

from __future__ import annotations

import numpy as np
import pytest

from examples.numpy_engine.observe import AFTER_BLOCKS, BEFORE_BLOCKS, PER_BLOCK
from examples.qwen2_tiny.weights import llama_qk_permutation
from orchlog.maps.namemap import load_maps, shipped_maps
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord

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


def test_hf_llama_meets_the_projections_llama_cpp_stores_permuted_in_hf_order():
    names = load_maps(["hf_llama"])
    assert names.lookup("model.layers.2.self_attn.q_proj") == ("Qcur", 2, "hf_order")
    assert names.lookup("model.layers.2.self_attn.k_proj") == ("Kcur", 2, "hf_order")
    assert names.lookup("Qcur", "reshape") == ("Qcur", None, "hf_order")
    assert names.lookup("model.layers.2.self_attn.v_proj") == ("Vcur", 2, None)  # no bias: llama.cpp's MUL_MAT
    assert names.lookup("model.layers.2.self_attn.o_proj", "input") == ("kqv_out", 2, None)


@pytest.mark.parametrize("n_head, head_dim", [(4, 16), (14, 64), (2, 128)])
def test_hf_llamas_view_undoes_the_gguf_permutation_for_any_head_count(n_head, head_dim):
    rng = np.random.default_rng(n_head)
    weight = rng.standard_normal((n_head * head_dim, 24)).astype(np.float32)
    x = rng.standard_normal(24).astype(np.float32)
    hf = weight @ x  # q_proj's output
    gguf = llama_qk_permutation(weight, n_head) @ x  # llama.cpp's Qcur, then RESHAPE'd per head
    raw = np.ascontiguousarray(gguf.reshape(n_head, head_dim)).data.cast("B")
    record = TraceRecord(
        "Qcur", stage="reshape", dtype="f32", shape=(n_head, head_dim), numel=hf.size, loader=lambda: raw
    )
    viewed = load_maps(["hf_llama"]).apply(RecordBatch.from_records([record]))
    assert not np.array_equal(gguf, hf)
    assert np.array_equal(np.frombuffer(viewed.loader[0](), np.float32), hf)
    assert viewed.shape_of(0) == (n_head * head_dim,) and viewed.stage[0] == "hf_order"
