"""The tiny Qwen2 twice: as made (`clean`) and with one planted weight change (`planted`), as GGUF files and
HF models, for dumps made by other tools (docs/formats.md).

The planted change scales layer PLANTED_LAYER's `mlp.down_proj` weight by PLANTED_SCALE: the first
module whose output differs is `model.layers.1.mlp.down_proj`, at layer 1; everything before it is
identical, so a comparison must name exactly that module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from examples import cli
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.gguf_file import write_gguf
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from examples.qwen2_tiny.weights import make_weights

if TYPE_CHECKING:  # imported where used, so that writing the GGUF files does not load torch
    import torch

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


def prompt_ids() -> torch.Tensor:
    import torch

    return torch.tensor([list(PROMPT)], dtype=torch.long)


OUT_DIR = "the directory the dump is written to"


def dump_main(module: str, doc: str | None, dump: Callable[[Any, Any, Path], Path], argv: list[str] | None) -> int:
    """A dump program's command line, `MODEL.gguf OUT_DIR`: `dump` of the GGUF's HF model on the prompt; prints
    what it returns."""
    args = cli.model_and_out(cli.parser(module, doc), OUT_DIR).parse_args(argv)
    print(dump(hf_model(args.model), prompt_ids(), args.out))
    return 0


MICRO_PROMPT = (3, 1, 4)


def micro_model(planted: bool):  # type: ignore[no-untyped-def]
    """A Qwen2 small enough for committed fixtures (hidden 8, two layers, two heads over one KV head,
    vocabulary 16), random weights from a fixed seed; `planted` scales layer 1's mlp.down_proj by
    PLANTED_SCALE."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(28)
    # transformers takes attn_implementation as an extra keyword, outside the config's dataclass fields.
    config = Qwen2Config(  # type: ignore[call-arg]
        vocab_size=16, hidden_size=8, intermediate_size=16, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=16, tie_word_embeddings=False, attn_implementation="eager",
    )  # fmt: skip
    model = Qwen2ForCausalLM(config).eval()
    with torch.no_grad():  # weights of the tiny Qwen2's scale (examples/qwen2_tiny/weights.py): activations near 1
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif p.dim() == 2:
                p.copy_(torch.randn_like(p) / (1.0 if "embed" in name else p.shape[1] ** 0.5))
            else:
                p.copy_(0.1 * torch.randn_like(p))
    if planted:
        with torch.no_grad():
            model.model.layers[PLANTED_LAYER].mlp.down_proj.weight.mul_(PLANTED_SCALE)
    return model


def load(spec: str):  # type: ignore[no-untyped-def]
    """(model, input_ids) of `micro-clean`, `micro-planted` or a tiny Qwen2 GGUF file."""
    import torch

    if spec in ("micro-clean", "micro-planted"):
        return micro_model(spec == "micro-planted"), torch.tensor([list(MICRO_PROMPT)], dtype=torch.long)
    return hf_model(Path(spec)), prompt_ids()
