"""What a vLLM-style engine logs of the tiny Qwen2, made from the NumPy engine's stages.

vLLM fuses the Q/K/V projections into one (`qkv_proj`, [q | k | v]) and gate
and up into another (`gate_up_proj`), runs the post-attention RMSNorm fused
with the residual add (its output is never a tensor of its own), and keeps
the residual stream apart: a decoder layer returns its MLP's output and the
residual, whose sum is what llama.cpp calls `l_out`. `observer(log)` turns
the NumPy engine's stages into what such an engine logs under its module
names; `vllm_style.toml` maps them back, deriving the checkpoints it lacks
(orchlog.maps.derived). `write_map(gguf, directory)` puts the map beside
the norm weights it reads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from examples.numpy_engine.observe import Observer
from examples.qwen2_tiny.gguf_file import read_gguf_tensors

MAP = Path(__file__).resolve().parent / "vllm_style.toml"

_RENAMED = {
    ("embd", None): "model.embed_tokens",
    ("attn_norm", None): "model.layers.{layer}.input_layernorm",
    ("kqv_out", None): "model.layers.{layer}.self_attn.o_proj@input",
    ("attn_out", None): "model.layers.{layer}.self_attn.o_proj",
    ("ffn_inp", None): "model.layers.{layer}@residual",
    ("ffn_swiglu", None): "model.layers.{layer}.mlp.down_proj@input",
    ("ffn_out", None): "model.layers.{layer}.mlp",
    ("result_norm", None): "model.norm",
    ("result_output", None): "lm_head",
}
# Parts of a fused output, in the order they are concatenated.
_FUSED = {
    ("Qcur", "add"): ("model.layers.{layer}.self_attn.qkv_proj", 0, 3),
    ("Kcur", "add"): ("model.layers.{layer}.self_attn.qkv_proj", 1, 3),
    ("Vcur", "add"): ("model.layers.{layer}.self_attn.qkv_proj", 2, 3),
    ("ffn_gate", None): ("model.layers.{layer}.mlp.gate_up_proj", 0, 2),
    ("ffn_up", None): ("model.layers.{layer}.mlp.gate_up_proj", 1, 2),
}


def observer(log: Observer) -> Observer:
    """An Observer for the NumPy engine that hands `log` what a vLLM-style engine would log."""
    waiting: dict[tuple[str, int | None, int, int], dict[int, np.ndarray]] = {}

    def observe(
        checkpoint: str, layer: int | None, token_idx: int, step: int, array: np.ndarray, stage: str | None = None
    ) -> None:
        key = (checkpoint, stage)
        if key in _FUSED:
            name, index, count = _FUSED[key]
            parts = waiting.setdefault((name, layer, token_idx, step), {})
            parts[index] = array
            if len(parts) == count:
                del waiting[(name, layer, token_idx, step)]
                fused = np.concatenate([parts[i].reshape(-1) for i in range(count)])
                log(name.format(layer=layer), layer, token_idx, step, fused)
        elif key in _RENAMED:
            name, _, new_stage = _RENAMED[key].format(layer=layer).partition("@")
            log(name, layer, token_idx, step, array, stage=new_stage or None)

    return observe


def write_map(gguf: str | Path, directory: Path) -> Path:
    """The map, and the post-attention norm weights it derives ffn_norm with, in `directory`."""
    weights = directory / "weights"
    weights.mkdir(parents=True, exist_ok=True)
    for name, tensor in read_gguf_tensors(gguf).items():
        if name.endswith("ffn_norm.weight"):
            np.save(weights / f"{name}.npy", tensor)
    return Path(shutil.copy(MAP, directory / MAP.name))
