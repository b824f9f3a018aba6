"""The tiny Qwen2's shape: small enough to run anywhere in milliseconds, with
every feature that the bugs under study touch (QKV biases, grouped-query
attention with two Q heads per KV head, NEOX-style RoPE, RMSNorm epsilon)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TinyQwen2Config:
    n_vocab: int = 256
    n_embd: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_head_kv: int = 2
    n_ff: int = 128
    n_ctx: int = 64
    rope_theta: float = 1_000_000.0  # Qwen2's value
    rms_norm_eps: float = 1e-6  # Qwen2's value; tiny next to the activations' mean square
    # The output projection has its own weights (Qwen2-0.5B ties it to the
    # embedding): a bug in the embedding lookup then cannot also move the logits' weights.
    tie_word_embeddings: bool = False

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def n_embd_kv(self) -> int:
        return self.n_head_kv * self.head_dim


TINY = TinyQwen2Config()
