"""The tiny Qwen2 twice: as made (`clean`) and with one planted weight change (`planted`), as GGUF files and
HF models, for dumps made by other tools (docs/formats.md).

The planted change scales layer PLANTED_LAYER's `mlp.down_proj` weight by PLANTED_SCALE: the first
module whose output differs is `model.layers.1.mlp.down_proj`, at layer 1; everything before it is
identical, so a comparison must name exactly that module.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.gguf_file import write_gguf
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from examples.qwen2_tiny.weights import make_weights

PLANTED_LAYER = 1
PLANTED_GGUF = f"blk.{PLANTED_LAYER}.ffn_down.weight"
PLANTED_MODULE = f"model.layers.{PLANTED_LAYER}.mlp.down_proj"
PLANTED_SCALE = 1.25
PROMPT = DEFAULT_SCENARIO.prompt


def weights(planted: bool) -> dict[str, np.ndarray]:
    w = make_weights(TINY)
    if planted:
        w[PLANTED_GGUF] = (w[PLANTED_GGUF] * np.float32(PLANTED_SCALE)).astype(np.float32)
    return w


def write_models(directory: Path) -> dict[str, Path]:
    """clean.gguf and planted.gguf under directory."""
    directory.mkdir(parents=True, exist_ok=True)
    return {
        kind: write_gguf(directory / f"{kind}.gguf", weights(kind == "planted"), TINY) for kind in ("clean", "planted")
    }


def hf_model(gguf: Path):  # type: ignore[no-untyped-def]
    """The HF transformers model of a GGUF file (eval mode, f32, eager attention)."""
    from examples.qwen2_tiny.hf_model import load_hf_model

    return load_hf_model(gguf)


def prompt_ids():  # type: ignore[no-untyped-def]
    import torch

    return torch.tensor([list(PROMPT)], dtype=torch.long)
