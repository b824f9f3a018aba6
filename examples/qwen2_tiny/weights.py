"""Random weights for the tiny Qwen2, reproducible from a seed.

Keyed by GGUF tensor name; each array is float32 in the shape HF uses
(`Linear` weights are (out_features, in_features)), which is also what the
gguf package takes: it writes the NumPy shape reversed as ggml's `ne`.
"""

from __future__ import annotations

import numpy as np

from examples.qwen2_tiny.config import TINY, TinyQwen2Config

DEFAULT_SEED = 20240607

# The embedding is small on purpose (rms 0.02, as in trained models): its mean
# square (4e-4) is then only ~400x the RMSNorm epsilon, so reading the wrong
# epsilon moves attn_norm-0 by ~1e-3, far above float32 noise.
EMBEDDING_STD = 0.02
# Biases large enough that forgetting them is not a rounding error.
BIAS_STD = 0.5


def layer_tensor_shapes(config: TinyQwen2Config, layer: int) -> dict[str, tuple[int, ...]]:
    d, kv, ff = config.n_embd, config.n_embd_kv, config.n_ff
    return {
        f"blk.{layer}.attn_norm.weight": (d,),
        f"blk.{layer}.attn_q.weight": (d, d),
        f"blk.{layer}.attn_q.bias": (d,),
        f"blk.{layer}.attn_k.weight": (kv, d),
        f"blk.{layer}.attn_k.bias": (kv,),
        f"blk.{layer}.attn_v.weight": (kv, d),
        f"blk.{layer}.attn_v.bias": (kv,),
        f"blk.{layer}.attn_output.weight": (d, d),
        f"blk.{layer}.ffn_norm.weight": (d,),
        f"blk.{layer}.ffn_gate.weight": (ff, d),
        f"blk.{layer}.ffn_up.weight": (ff, d),
        f"blk.{layer}.ffn_down.weight": (d, ff),
    }


def tensor_shapes(config: TinyQwen2Config = TINY) -> dict[str, tuple[int, ...]]:
    """Every tensor of the model in file order, with its NumPy shape."""
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (config.n_vocab, config.n_embd)}
    for layer in range(config.n_layer):
        shapes.update(layer_tensor_shapes(config, layer))
    shapes["output_norm.weight"] = (config.n_embd,)
    if not config.tie_word_embeddings:
        shapes["output.weight"] = (config.n_vocab, config.n_embd)
    return shapes


def make_weights(config: TinyQwen2Config = TINY, seed: int = DEFAULT_SEED) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in tensor_shapes(config).items():
        weights[name] = _draw(rng, name, shape).astype(np.float32)
    return weights


def _draw(rng: np.random.Generator, name: str, shape: tuple[int, ...]) -> np.ndarray:
    if name == "token_embd.weight":
        return rng.normal(0.0, EMBEDDING_STD, shape)
    if name.endswith("norm.weight"):
        # Around 1, but not 1: a norm that skipped its weight must show.
        return 1.0 + rng.normal(0.0, 0.1, shape)
    if name.endswith(".bias"):
        return rng.normal(0.0, BIAS_STD, shape)
    # Matrices scaled by 1/sqrt(fan_in) keep activations near unit size through the layers.
    fan_in = shape[1]
    return rng.normal(0.0, 1.0 / np.sqrt(fan_in), shape)


def llama_qk_permutation(tensor: np.ndarray, n_head: int) -> np.ndarray:
    """What convert_hf_to_gguf.py does to Q and K for the `llama` architecture (not qwen2): within each
    head, element (t, j) of [2, head_dim/2] moves to 2j + t, so that adjacent pairs rotate together."""
    shape = tensor.shape
    permuted: np.ndarray = tensor.reshape(n_head, 2, shape[0] // n_head // 2, *shape[1:]).swapaxes(1, 2).reshape(shape)
    return permuted


def with_llama_qk_permutation(weights: dict[str, np.ndarray], config: TinyQwen2Config = TINY) -> dict[str, np.ndarray]:
    """The weights with every layer's Q and K (weights and biases) permuted as for the `llama` architecture."""
    out = dict(weights)
    for layer in range(config.n_layer):
        for name, n_head in (("attn_q", config.n_head), ("attn_k", config.n_head_kv)):
            for part in ("weight", "bias"):
                key = f"blk.{layer}.{name}.{part}"
                out[key] = np.ascontiguousarray(llama_qk_permutation(weights[key], n_head))
    return out
