"""Bugs the NumPy engine can be told to have, each one seen in a real Qwen2 port.

They combine as flags (`Bug.NO_QKV_BIAS | Bug.ROPE_K_PER_Q_HEAD`); `Bug.NONE`
is the clean engine that agrees with llama.cpp and HF transformers.
"""

from __future__ import annotations

import enum


class Bug(enum.Flag):
    NONE = 0
    # The embedding lookup indexes token_embd as if it were stored
    # [n_embd][n_vocab] (`table[dim * n_vocab + token]`), when GGUF keeps one
    # row of n_embd values per token. Every embedding is garbage from token 0.
    TRANSPOSED_EMBEDDING = enum.auto()
    # attn_q/attn_k/attn_v biases are never added. Qwen2 is one of the few
    # Llama-like models with QKV biases, and a Llama port does not have them.
    NO_QKV_BIAS = enum.auto()
    # RoPE is applied inside the loop over Q heads, rotating the K head that
    # each Q head shares (grouped-query attention): every K head is rotated
    # n_head / n_head_kv times. Position 0 rotates by zero, so the first token
    # is untouched and the damage starts at the second.
    ROPE_K_PER_Q_HEAD = enum.auto()
    # The RMSNorm epsilon is read from `llama.attention.layer_norm_rms_epsilon`,
    # absent from a qwen2 GGUF (its key is `qwen2.attention...`), and silently
    # defaults to 0.
    EPS_FROM_WRONG_KEY = enum.auto()
    # The FFN norm multiplies by its weight twice: once inside a fused
    # "normalize and scale" kernel and once more where the unfused code used
    # to apply it. Every channel is off by its own weight, at every token.
    NORM_WEIGHT_TWICE = enum.auto()
    # The attention block's residual add is dropped: ffn_inp is the attention
    # output alone instead of attention output plus the block's input (the
    # in-place add wrote into a temporary).
    SKIPPED_ATTN_RESIDUAL = enum.auto()
    # The FFN down projection's output goes through a bfloat16 buffer (a
    # half-precision scratch tensor reused for it): rounded to bfloat16.
    BF16_FFN_OUT = enum.auto()
    # Decode steps give RoPE the number of tokens cached before the previous
    # one (n_past - 1) as the new token's position: prefill and decode
    # disagree, every decode token is rotated one position short.
    DECODE_POSITION_OFF_BY_ONE = enum.auto()
    # The loader's loop over the V biases stops one layer short
    # (`range(n_layer - 1)`): the last layer's V projection runs without its
    # bias. One stage of one layer is wrong; every later record inherits it.
    LAST_LAYER_NO_V_BIAS = enum.auto()
    # The attention norm normalizes but never multiplies by its weight (a
    # fused kernel's "weight" argument left null): attn_norm is off by each
    # channel's weight, at every layer and token.
    ATTN_NORM_WITHOUT_WEIGHT = enum.auto()
    # SwiGLU's gate and up projections are swapped: silu(up) * gate instead
    # of silu(gate) * up (the two matrices are stored side by side).
    SWAPPED_SWIGLU = enum.auto()
    # RoPE rotates adjacent pairs (2i, 2i+1), the `llama` layout, on a model
    # whose heads rotate their two halves (qwen2 is NEOX-style): every
    # position but 0 is rotated wrongly.
    ROPE_ADJACENT_PAIRS = enum.auto()
    # The attention scores skip the 1/sqrt(head_dim) scale: softmax runs at
    # a temperature of 1/sqrt(head_dim), sharper in every head.
    KQ_UNSCALED = enum.auto()
    # The RMSNorm epsilon is a hard-coded 1e-5 (a Llama default) rather than
    # the file's 1e-6: a small change, largest where activations are small.
    EPS_HARD_CODED = enum.auto()

    @classmethod
    def parse(cls, names: str) -> Bug:
        """`"no_qkv_bias,rope_k_per_q_head"` -> the combined flag; `""` or `"none"` -> NONE."""
        bugs = cls.NONE
        for name in filter(None, (part.strip() for part in names.split(","))):
            try:
                bugs |= cls[name.upper()]
            except KeyError:
                known = ", ".join(b.label for b in cls if b is not cls.NONE)
                raise ValueError(f"unknown bug {name!r}; known: {known}") from None
        return bugs

    @property
    def label(self) -> str:
        """The name in lower case, as parse() takes it; a combination's names joined by "|" (`Flag.name` is
        None for a combination before Python 3.11)."""
        return "|".join(name.lower() for name, bug in type(self).__members__.items() if bug and bug in self) or "none"


ALL_BUGS = tuple(bug for bug in Bug if bug is not Bug.NONE)
