"""Load a qwen2 GGUF the way a hand-written engine does: hyperparameters from
metadata keys, weights by tensor name. The epsilon bug lives here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np

from examples.numpy_engine.bugs import Bug
from examples.qwen2_tiny.gguf_file import read_gguf_tensors

_REQUIRED = object()


@dataclass(frozen=True)
class HyperParams:
    n_vocab: int
    n_embd: int
    n_layer: int
    n_head: int
    n_head_kv: int
    n_ff: int
    n_ctx: int
    rope_theta: float
    rms_norm_eps: float

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


@dataclass(frozen=True)
class Model:
    hparams: HyperParams
    weights: dict[str, np.ndarray]  # by GGUF name, NumPy (HF) shapes, float32


def load_model(path: str | Path, bugs: Bug = Bug.NONE) -> Model:
    reader = gguf.GGUFReader(str(path))
    arch = _field(reader, "general.architecture")
    if arch != "qwen2":
        raise ValueError(f"{path}: architecture {arch!r}, the NumPy engine runs qwen2 only")
    if Bug.EPS_FROM_WRONG_KEY in bugs:
        # The incident: the key of the architecture the code was first written for.
        eps = _field(reader, "llama.attention.layer_norm_rms_epsilon", default=0.0)
    else:
        eps = _field(reader, f"{arch}.attention.layer_norm_rms_epsilon")
    hparams = HyperParams(
        n_vocab=_field(reader, f"{arch}.vocab_size"),
        n_embd=_field(reader, f"{arch}.embedding_length"),
        n_layer=_field(reader, f"{arch}.block_count"),
        n_head=_field(reader, f"{arch}.attention.head_count"),
        n_head_kv=_field(reader, f"{arch}.attention.head_count_kv"),
        n_ff=_field(reader, f"{arch}.feed_forward_length"),
        n_ctx=_field(reader, f"{arch}.context_length"),
        rope_theta=_field(reader, f"{arch}.rope.freq_base", default=10000.0),
        rms_norm_eps=eps,
    )
    return Model(hparams=hparams, weights=read_gguf_tensors(path, dequantize=True))


def _field(reader: gguf.GGUFReader, key: str, default: object = _REQUIRED) -> Any:
    """The value of metadata key `key` (gguf types it Any: an int, a float, a string or a list, by the key)."""
    field = reader.get_field(key)
    if field is None:
        if default is _REQUIRED:
            raise KeyError(f"GGUF metadata key {key!r} is missing")
        return default
    return field.contents()
