"""Small weight files for the weights tests: GGUF through the gguf package, safetensors through the
safetensors package (its own writer, so that orchlog's reader is checked against it), .npz through NumPy.
HF names come from the gguf package's own tensor-name table, not from orchlog's maps."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from safetensors.numpy import save_file

from orchlog.weights.layout import llama_permute

N_EMBD, N_HEAD, N_HEAD_KV, N_FF, N_VOCAB, N_LAYER = 32, 4, 2, 48, 40, 2


def gguf_weights(seed: int = 0, biases: bool = True) -> dict[str, np.ndarray]:
    """HF-layout weights keyed by GGUF name."""
    rng = np.random.default_rng(seed)
    kv = N_EMBD // N_HEAD * N_HEAD_KV
    w = {"token_embd.weight": rng.standard_normal((N_VOCAB, N_EMBD)) * 0.02}
    for i in range(N_LAYER):
        shapes = {
            "attn_norm.weight": (N_EMBD,),
            "attn_q.weight": (N_EMBD, N_EMBD),
            "attn_k.weight": (kv, N_EMBD),
            "attn_v.weight": (kv, N_EMBD),
            "attn_output.weight": (N_EMBD, N_EMBD),
            "ffn_norm.weight": (N_EMBD,),
            "ffn_gate.weight": (N_FF, N_EMBD),
            "ffn_up.weight": (N_FF, N_EMBD),
            "ffn_down.weight": (N_EMBD, N_FF),
        }
        if biases:
            shapes.update({"attn_q.bias": (N_EMBD,), "attn_k.bias": (kv,), "attn_v.bias": (kv,)})
        for name, shape in shapes.items():
            w[f"blk.{i}.{name}"] = rng.standard_normal(shape) * (0.5 if name.endswith("bias") else 0.2)
    w["output_norm.weight"] = 1 + 0.1 * rng.standard_normal(N_EMBD)
    w["output.weight"] = rng.standard_normal((N_VOCAB, N_EMBD)) * 0.2
    return {k: v.astype(np.float32) for k, v in w.items()}


def hf_name(arch: gguf.MODEL_ARCH, gguf_name: str) -> str:
    table = gguf.get_tensor_name_map(arch, N_LAYER)
    base, suffix = gguf_name.rsplit(".", 1)
    for key, (_, name) in table.mapping.items():
        if name == base and (key.startswith("model.") or key == "lm_head"):
            return f"{key}.{suffix}"
    raise KeyError(gguf_name)


def write_gguf(path: Path, weights: dict[str, np.ndarray], arch: str = "qwen2", quantize: dict | None = None) -> Path:
    writer = gguf.GGUFWriter(str(path), arch=arch)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_block_count(N_LAYER)
    for name, arr in weights.items():
        qtype = (quantize or {}).get(name)
        if qtype is None:
            writer.add_tensor(name, np.ascontiguousarray(arr))
        else:
            data = gguf.quants.quantize(np.ascontiguousarray(arr), qtype)
            writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def write_hf(path: Path, weights: dict[str, np.ndarray], arch: gguf.MODEL_ARCH = gguf.MODEL_ARCH.QWEN2) -> Path:
    save_file({hf_name(arch, k): np.ascontiguousarray(v) for k, v in weights.items()}, str(path))
    return path


def llama_gguf_weights(hf_layout: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What convert_hf_to_gguf.py stores for a llama: Q and K rows permuted."""
    out = dict(hf_layout)
    for name, arr in hf_layout.items():
        if ".attn_q." in name:
            out[name] = llama_permute(arr, N_HEAD)
        elif ".attn_k." in name:
            out[name] = llama_permute(arr, N_HEAD_KV)
    return out
