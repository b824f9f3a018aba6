"""Realistic activations without downloading a model: a small transformer forward pass in NumPy.

Compression of tensor bytes depends on how values are spread (exponents) and
on how many mantissa bits are live, not on the exact numbers, so a forward
pass with random weights but the shape of a real one gives the right
material: Qwen2-0.5B's widths (hidden 896, 14 query and 2 KV heads, SwiGLU
FFN of 4864), RMSNorm, RoPE, causal attention, a residual stream with a few
"massive" channels that grow with depth (as trained LLMs have), an f16
embedding table (so the embedding output holds f16 values, as it does in
llama.cpp with an f16 GGUF), and logits over a 32000-token vocabulary.

`forward(...)` yields (checkpoint, layer, array) for a prompt pass, in
execution order, as float32; `cast` gives the other forms engines log:
f16, bf16 (2 bytes), and f32 upcast from bf16 (an engine that computes in
bf16 and logs f32: the low 16 bits of every element are zero).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB = 896, 14, 2, 64, 4864, 32000
FORMS = ("f32", "f16", "bf16", "f32-from-bf16")


class Model:
    def __init__(self, layers: int = 8, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)

        def w(rows: int, cols: int, scale: float = 1.0) -> np.ndarray:
            m: np.ndarray = rng.standard_normal((rows, cols), dtype=np.float32) * (scale / np.sqrt(rows))
            return m.astype(np.float32)

        self.embed = (rng.standard_normal((VOCAB, HIDDEN), dtype=np.float32) * 0.02).astype(np.float16)
        self.massive = rng.choice(HIDDEN, size=4, replace=False)
        self.layers = []
        for _ in range(layers):
            self.layers.append(
                {
                    "attn_norm": (1 + 0.3 * rng.standard_normal(HIDDEN)).astype(np.float32),
                    "wq": w(HIDDEN, HEADS * HEAD_DIM),
                    "wk": w(HIDDEN, KV_HEADS * HEAD_DIM),
                    "wv": w(HIDDEN, KV_HEADS * HEAD_DIM),
                    "bq": 0.1 * rng.standard_normal(HEADS * HEAD_DIM).astype(np.float32),
                    "wo": w(HEADS * HEAD_DIM, HIDDEN, 0.5),
                    "ffn_norm": (1 + 0.3 * rng.standard_normal(HIDDEN)).astype(np.float32),
                    "w_gate": w(HIDDEN, FFN, 2.0),
                    "w_up": w(HIDDEN, FFN),
                    "w_down": w(FFN, HIDDEN, 0.5),
                }
            )
        self.out_norm = (1 + 0.3 * rng.standard_normal(HIDDEN)).astype(np.float32)
        self.w_out = w(HIDDEN, VOCAB, 4.0)


def _rms_norm(x: np.ndarray, gain: np.ndarray) -> np.ndarray:
    y: np.ndarray = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * gain
    return y.astype(np.float32)


def _rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    half = HEAD_DIM // 2
    freq = 1.0 / (1e6 ** (np.arange(half, dtype=np.float32) / half))
    angle = positions[:, None, None] * freq[None, None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1).astype(np.float32)


def forward(model: Model, tokens: np.ndarray) -> Iterator[tuple[str, int | None, np.ndarray]]:
    """One prompt pass over `tokens`: (checkpoint, layer, float32 array) in execution order."""
    n = len(tokens)
    positions = np.arange(n, dtype=np.float32)
    x = model.embed[tokens].astype(np.float32)
    yield "inp_embd", None, x
    mask = np.triu(np.full((n, n), -np.inf, dtype=np.float32), k=1)
    for i, p in enumerate(model.layers):
        h = _rms_norm(x, p["attn_norm"])
        yield "attn_norm", i, h
        q = _rope((h @ p["wq"] + p["bq"]).reshape(n, HEADS, HEAD_DIM), positions)
        k = _rope((h @ p["wk"]).reshape(n, KV_HEADS, HEAD_DIM), positions)
        v = (h @ p["wv"]).reshape(n, KV_HEADS, HEAD_DIM)
        yield "Qcur", i, q
        yield "Kcur", i, k
        yield "Vcur", i, v
        k_rep = np.repeat(k, HEADS // KV_HEADS, axis=1)
        v_rep = np.repeat(v, HEADS // KV_HEADS, axis=1)
        scores = np.einsum("qhd,khd->hqk", q, k_rep) / np.float32(np.sqrt(HEAD_DIM)) + mask
        probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = (probs / probs.sum(axis=-1, keepdims=True)).astype(np.float32)
        yield "kq_soft_max", i, probs
        attn = np.einsum("hqk,khd->qhd", probs, v_rep).reshape(n, HEADS * HEAD_DIM).astype(np.float32)
        out = (attn @ p["wo"]).astype(np.float32)
        yield "attn_out", i, out
        x = x + out
        # Trained models grow a few huge residual channels; they set the dynamic range.
        x[:, model.massive] += np.float32(2.0 * (i + 1))
        yield "ffn_inp", i, x
        h = _rms_norm(x, p["ffn_norm"])
        yield "ffn_norm", i, h
        gate, up = h @ p["w_gate"], h @ p["w_up"]
        yield "ffn_gate", i, gate
        yield "ffn_up", i, up
        act = (gate / (1 + np.exp(-gate)) * up).astype(np.float32)
        yield "ffn_act", i, act
        down = (act @ p["w_down"]).astype(np.float32)
        yield "ffn_out", i, down
        x = x + down
        yield "l_out", i, x
    h = _rms_norm(x, model.out_norm)
    yield "result_norm", None, h
    yield "result_output", None, (h @ model.w_out).astype(np.float32)


def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even f32 -> bf16, as uint16 bit patterns (NaN stays NaN)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), rounded)


def cast(x: np.ndarray, form: str) -> tuple[str, np.ndarray]:
    """(schema dtype, array whose bytes are the tensor as an engine would log it)."""
    if form == "f32":
        return "f32", x
    if form == "f16":
        return "f16", x.astype(np.float16)
    if form == "bf16":
        return "bf16", to_bf16_bits(x)
    if form == "f32-from-bf16":
        return "f32", (to_bf16_bits(x).astype(np.uint32) << 16).view(np.float32)
    raise ValueError(form)


def prompt(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, size=n)
