"""The NumPy Qwen2 engine: float32 throughout, a KV cache, and the forward pass
written out stage by stage so that each stage can be observed by name.

    engine = NumpyQwen2Engine(load_model("tiny-qwen2.gguf"), bugs=Bug.NO_QKV_BIAS)
    logits = engine.run(DEFAULT_SCENARIO)        # (n_positions, n_vocab)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from examples.numpy_engine.bugs import Bug
from examples.numpy_engine.model import Model
from examples.numpy_engine.observe import Observer
from examples.qwen2_tiny.scenario import ForwardCall, Scenario


class NumpyQwen2Engine:
    def __init__(self, model: Model, bugs: Bug = Bug.NONE, observe: Observer | None = None) -> None:
        self.hp = model.hparams
        self.w = model.weights
        self.bugs = bugs
        self.observe = observe
        hp = self.hp
        self.k_cache = np.zeros((hp.n_layer, hp.n_ctx, hp.n_head_kv, hp.head_dim), np.float32)
        self.v_cache = np.zeros_like(self.k_cache)

    def run(self, scenario: Scenario) -> np.ndarray:
        """Logits of every position, float32 (n_positions, n_vocab); the cache starts empty."""
        self.k_cache[:] = 0
        self.v_cache[:] = 0
        return np.concatenate([self.forward(call) for call in scenario.calls()], axis=0)

    def forward(self, call: ForwardCall) -> np.ndarray:
        """One engine call over `call.tokens` at `call.positions`; returns their logits."""
        positions = np.asarray(call.positions)
        x = self._embed(np.asarray(call.tokens))
        self._emit("embd", None, call, x)
        for layer in range(self.hp.n_layer):
            x = self._block(layer, x, positions, call)
        x = self._rms_norm(x, self.w["output_norm.weight"])
        self._emit("result_norm", None, call, x)
        # A model with tied embeddings has no output.weight; llama.cpp then reuses token_embd.
        logits: np.ndarray = x @ self.w.get("output.weight", self.w["token_embd.weight"]).T
        self._emit("result_output", None, call, logits)
        return logits

    def _block(self, layer: int, x: np.ndarray, positions: np.ndarray, call: ForwardCall) -> np.ndarray:
        w = self._layer_weights(layer)
        norm_weight = w("attn_norm.weight")
        if Bug.ATTN_NORM_WITHOUT_WEIGHT in self.bugs:
            norm_weight = np.ones_like(norm_weight)
        h = self._rms_norm(x, norm_weight)
        self._emit("attn_norm", layer, call, h)
        attn = self._attention(layer, h, positions, call)
        attn_out = attn @ w("attn_output.weight").T
        self._emit("attn_out", layer, call, attn_out)
        ffn_inp = attn_out if Bug.SKIPPED_ATTN_RESIDUAL in self.bugs else attn_out + x
        self._emit("ffn_inp", layer, call, ffn_inp)
        h = self._rms_norm(ffn_inp, w("ffn_norm.weight"))
        if Bug.NORM_WEIGHT_TWICE in self.bugs:
            h = h * w("ffn_norm.weight")
        self._emit("ffn_norm", layer, call, h)
        gate = h @ w("ffn_gate.weight").T
        self._emit("ffn_gate", layer, call, gate)
        up = h @ w("ffn_up.weight").T
        self._emit("ffn_up", layer, call, up)
        act = _silu(up) * gate if Bug.SWAPPED_SWIGLU in self.bugs else _silu(gate) * up
        self._emit("ffn_swiglu", layer, call, act)
        ffn_out = act @ w("ffn_down.weight").T
        if Bug.BF16_FFN_OUT in self.bugs:
            ffn_out = _round_to_bf16(ffn_out)
        self._emit("ffn_out", layer, call, ffn_out)
        out: np.ndarray = ffn_out + ffn_inp
        self._emit("l_out", layer, call, out)
        return out

    def _attention(self, layer: int, h: np.ndarray, positions: np.ndarray, call: ForwardCall) -> np.ndarray:
        hp, n_tokens = self.hp, h.shape[0]
        w = self._layer_weights(layer)
        q, k, v = (h @ w(f"attn_{p}.weight").T for p in "qkv")
        if Bug.NO_QKV_BIAS not in self.bugs:
            q, k = q + w("attn_q.bias"), k + w("attn_k.bias")
            if not (Bug.LAST_LAYER_NO_V_BIAS in self.bugs and layer == hp.n_layer - 1):
                v = v + w("attn_v.bias")
        for name, t in (("Qcur", q), ("Kcur", k), ("Vcur", v)):
            self._emit(name, layer, call, t, stage="add")
        q = q.reshape(n_tokens, hp.n_head, hp.head_dim)
        k = k.reshape(n_tokens, hp.n_head_kv, hp.head_dim)
        v = v.reshape(n_tokens, hp.n_head_kv, hp.head_dim)
        q, k = self._rope(
            q, k, positions - 1 if call.step > 0 and Bug.DECODE_POSITION_OFF_BY_ONE in self.bugs else positions
        )
        self._emit("Qcur", layer, call, q, stage="rope")
        self._emit("Kcur", layer, call, k, stage="rope")

        self.k_cache[layer, positions] = k
        self.v_cache[layer, positions] = v
        n_kv = positions[-1] + 1
        keys, values = self.k_cache[layer, :n_kv], self.v_cache[layer, :n_kv]
        group = hp.n_head // hp.n_head_kv  # Q heads per KV head; Q head i reads KV head i // group
        keys, values = np.repeat(keys, group, axis=1), np.repeat(values, group, axis=1)

        kq = np.einsum("thd,shd->ths", q, keys)  # every cached position, before scaling and masking (ggml's kq)
        self._emit_causal("kq", layer, call, kq)
        scores = kq if Bug.KQ_UNSCALED in self.bugs else kq * np.float32(1.0 / np.sqrt(hp.head_dim))
        # Causal: the token at position p sees cache positions 0..p.
        scores = np.where(np.arange(n_kv)[None, None, :] <= positions[:, None, None], scores, -np.inf)
        probs = _softmax(scores)
        self._emit_causal("kq_soft_max", layer, call, probs)
        out: np.ndarray = np.einsum("ths,shd->thd", probs, values).reshape(n_tokens, hp.n_embd)
        self._emit("kqv_out", layer, call, out)
        return out

    def _rope(self, q: np.ndarray, k: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cos, sin = _rope_tables(positions, self.hp.head_dim, self.hp.rope_theta)
        if Bug.ROPE_ADJACENT_PAIRS in self.bugs:
            return _rotate_adjacent(q, cos, sin), _rotate_adjacent(k, cos, sin)
        if Bug.ROPE_K_PER_Q_HEAD not in self.bugs:
            return _rotate_neox(q, cos, sin), _rotate_neox(k, cos, sin)
        # The incident's loop: one pass per Q head, rotating the K head it shares.
        q, k = q.copy(), k.copy()
        group = self.hp.n_head // self.hp.n_head_kv
        for head in range(self.hp.n_head):
            q[:, head] = _rotate_neox(q[:, head], cos[:, 0], sin[:, 0])
            k[:, head // group] = _rotate_neox(k[:, head // group], cos[:, 0], sin[:, 0])
        return q, k

    def _embed(self, tokens: np.ndarray) -> np.ndarray:
        table = self.w["token_embd.weight"]  # (n_vocab, n_embd): one row per token
        if Bug.TRANSPOSED_EMBEDDING in self.bugs:
            n_vocab, n_embd = table.shape
            transposed: np.ndarray = table.reshape(-1)[np.arange(n_embd)[None, :] * n_vocab + tokens[:, None]]
            return transposed
        rows: np.ndarray = table[tokens]
        return rows

    def _rms_norm(self, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
        # Mean square accumulated in float64, as ggml does, then scaled in float32.
        mean_square = np.mean(np.square(x, dtype=np.float64), axis=-1, keepdims=True)
        eps = 1e-5 if Bug.EPS_HARD_CODED in self.bugs else self.hp.rms_norm_eps
        scale = (1.0 / np.sqrt(mean_square + eps)).astype(np.float32)
        normed: np.ndarray = (x * scale) * weight
        return normed

    def _layer_weights(self, layer: int) -> Callable[[str], np.ndarray]:
        """Layer `layer`'s weights by their name within the block ("attn_q.weight")."""
        return lambda name: self.w[f"blk.{layer}.{name}"]

    def _emit(
        self, checkpoint: str, layer: int | None, call: ForwardCall, rows: np.ndarray, stage: str | None = None
    ) -> None:
        if self.observe is None:
            return
        for row, position in zip(rows, call.positions):
            self.observe(checkpoint, layer, position, call.step, row, stage=stage)

    def _emit_causal(self, checkpoint: str, layer: int, call: ForwardCall, rows: np.ndarray) -> None:
        """Attention rows [token, head, cell], each token's cut to the cells it attends to (positions 0 to its
        own), as orchlog's ggml adapter logs llama.cpp's."""
        if self.observe is None:
            return
        for row, position in zip(rows, call.positions):
            self.observe(checkpoint, layer, position, call.step, row[:, : position + 1])


def _rope_tables(positions: np.ndarray, head_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin, shaped (n_tokens, 1, head_dim // 2) to broadcast over heads."""
    inv_freq = theta ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = positions[:, None].astype(np.float64) * inv_freq[None, :]
    return np.cos(angles)[:, None, :].astype(np.float32), np.sin(angles)[:, None, :].astype(np.float32)


def _rotate_neox(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """NEOX-style RoPE: element i pairs with element i + head_dim/2 (HF's rotate_half)."""
    half = x.shape[-1] // 2
    x0, x1 = x[..., :half], x[..., half:]
    return np.concatenate([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=-1)


def _rotate_adjacent(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """The `llama` layout's RoPE: element 2i pairs with element 2i + 1."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x0 * cos - x1 * sin, x0 * sin + x1 * cos
    return out


def _round_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 rounded to the nearest bfloat16 (ties to even), as a float32 array."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    out: np.ndarray = rounded.view(np.float32)
    return out


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs: np.ndarray = (shifted / shifted.sum(axis=-1, keepdims=True)).astype(np.float32)
    return probs


def _silu(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = x / (np.float32(1.0) + np.exp(-x))
    return out
