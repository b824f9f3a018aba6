"""The tiny Qwen2 as a HF transformers `Qwen2ForCausalLM`, built from a
`Qwen2Config` (no hub) and loaded with the weights of the GGUF file.

GGUF and HF names are matched by the gguf package's own tensor-name map (the
one convert_hf_to_gguf.py uses), and every HF parameter must be found there:
a strict load, so a missing or misnamed weight is an error, not a random init.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from examples.qwen2_tiny.config import TINY, TinyQwen2Config
from examples.qwen2_tiny.gguf_file import read_gguf_tensors


def hf_config(config: TinyQwen2Config = TINY) -> Qwen2Config:
    # transformers takes attn_implementation as an extra keyword, outside the config's dataclass fields.
    return Qwen2Config(  # type: ignore[call-arg]
        vocab_size=config.n_vocab,
        hidden_size=config.n_embd,
        intermediate_size=config.n_ff,
        num_hidden_layers=config.n_layer,
        num_attention_heads=config.n_head,
        num_key_value_heads=config.n_head_kv,
        max_position_embeddings=config.n_ctx,
        rms_norm_eps=config.rms_norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": config.rope_theta},
        tie_word_embeddings=config.tie_word_embeddings,
        hidden_act="silu",
        dtype="float32",
        # Plain matmul + softmax attention, so that hooks see every stage and
        # results do not depend on which fused kernel this machine picks.
        attn_implementation="eager",
    )


def hf_state_dict(
    tensors: dict[str, np.ndarray], config: TinyQwen2Config, model: Qwen2ForCausalLM
) -> dict[str, torch.Tensor]:
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN2, config.n_layer)
    state = {}
    for hf_name in model.state_dict():
        gguf_name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if gguf_name is None or gguf_name not in tensors:
            raise KeyError(f"no GGUF tensor for HF parameter {hf_name} (mapped to {gguf_name})")
        state[hf_name] = torch.from_numpy(tensors[gguf_name].copy())
    return state


def load_hf_model(gguf_path: str | Path, config: TinyQwen2Config = TINY) -> Qwen2ForCausalLM:
    model = Qwen2ForCausalLM(hf_config(config))
    model.load_state_dict(hf_state_dict(read_gguf_tensors(gguf_path), config, model), strict=True)
    model.eval()
    return model
