"""A stack of SwiGLU MLP blocks (Qwen2's FFN with a residual), run whole or split over W ranks the
Megatron way, logging what each rank holds.

    x -> ffn_norm = rms_norm(x) * w          replicated: every rank holds it
      -> ffn_gate = h @ W_gate.T, ffn_up      column-parallel: rank r holds rows r*k..(r+1)*k of n_ff
      -> ffn_swiglu = silu(gate) * up         column-parallel, the same slice
      -> ffn_out = swiglu @ W_down.T          row-parallel: rank r holds a partial sum, all-reduced
      -> l_out = x + ffn_out                  replicated

`run(weights, x, ways)` returns what each rank logs, as (rank, checkpoint, layer, token, array) in
execution order; rank 0 logs the replicated tensors, as sharded engines usually do. Ranks run in one
process, one after the other per block, with the all-reduce a plain sum.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

N_EMBD, N_FF, N_LAYER, N_TOKENS = 32, 64, 2, 5
EPS = 1e-6


class Bug(enum.Enum):
    NONE = "none"
    # Rank 1 loads rank 0's rows of W_up (an off-by-one shard index): only rank 1's slice of
    # ffn_up is wrong, and everything after it.
    RANK1_UP_SHARD = "rank1_up_shard"
    # Rank 1 loads rank 0's columns of W_down: its partial sum is wrong, and the all-reduced
    # ffn_out with it. A sum does not say which rank's part is wrong.
    RANK1_DOWN_SHARD = "rank1_down_shard"


@dataclasses.dataclass(frozen=True)
class Weights:
    norm: np.ndarray  # (N_LAYER, N_EMBD)
    gate: np.ndarray  # (N_LAYER, N_FF, N_EMBD)
    up: np.ndarray
    down: np.ndarray  # (N_LAYER, N_EMBD, N_FF)


def make_weights(seed: int = 0) -> Weights:
    rng = np.random.default_rng(seed)

    def f(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    return Weights(
        1 + 0.1 * f(N_LAYER, N_EMBD),
        f(N_LAYER, N_FF, N_EMBD) / np.sqrt(N_EMBD),
        f(N_LAYER, N_FF, N_EMBD) / np.sqrt(N_EMBD),
        f(N_LAYER, N_EMBD, N_FF) / np.sqrt(N_FF),
    )


def make_input(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N_TOKENS, N_EMBD)).astype(np.float32)


Logged = tuple[int, str, int, np.ndarray]  # (rank, checkpoint, layer, tensor of every token: rows are tokens)


def _rms_norm(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    scale = (1.0 / np.sqrt(np.mean(np.square(x, dtype=np.float64), axis=-1, keepdims=True) + EPS)).astype(np.float32)
    out: np.ndarray = x * scale * w
    return out


def _silu(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = x / (np.float32(1.0) + np.exp(-x))
    return out


def run(weights: Weights, x: np.ndarray, ways: int = 1, bug: Bug = Bug.NONE) -> list[Logged]:
    """Every block over every token on `ways` ranks (1: unsharded); what each rank logs, in order."""
    if N_FF % ways:
        raise ValueError(f"n_ff {N_FF} does not split {ways} ways")
    k = N_FF // ways
    logged: list[Logged] = []
    for layer in range(N_LAYER):
        h = _rms_norm(x, weights.norm[layer])
        logged.append((0, "ffn_norm", layer, h))
        partials = []
        for rank in range(ways):
            up_rows = 0 if bug is Bug.RANK1_UP_SHARD and rank == 1 else rank
            down_cols = 0 if bug is Bug.RANK1_DOWN_SHARD and rank == 1 else rank
            gate = h @ weights.gate[layer, rank * k : (rank + 1) * k].T
            up = h @ weights.up[layer, up_rows * k : (up_rows + 1) * k].T
            act = _silu(gate) * up
            partial = act @ weights.down[layer][:, down_cols * k : (down_cols + 1) * k].T
            logged += [(rank, "ffn_gate", layer, gate), (rank, "ffn_up", layer, up), (rank, "ffn_swiglu", layer, act)]
            logged.append((rank, "ffn_out", layer, partial))
            partials.append(partial)
        x = x + np.sum(partials, axis=0, dtype=np.float32)
        logged.append((0, "l_out", layer, x))
    return logged
