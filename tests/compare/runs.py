"""Two runs of a pretend model, for compare tests: same tensors unless a bug says otherwise."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from orchlog.encoding.record import RecordInput
from tests.tracegen import emit, record

CHECKPOINTS = ("attn_norm", "Qcur", "ffn_out", "l_out")
Bug = Callable[[int, int | None, str], float]  # (token, layer, checkpoint) -> offset added to every element


def run(
    tokens: int = 3, layers: int = 3, bug: Bug | None = None, width: int = 24, vocab: int = 40, values: int = 10, **kw
) -> list[RecordInput]:
    """embedding, then per layer CHECKPOINTS, then logits, for each token; seq counts records."""
    rng = np.random.default_rng(0)
    out, seq = [], 0

    def add(name, arr, tok, layer=None):
        nonlocal seq
        off = bug(tok, layer, name) if bug else 0.0
        out.append(
            record(name, (arr + off).astype(np.float32), token_idx=tok, layer=layer, seq=seq, values=values, **kw)
        )
        seq += 1

    for tok in range(tokens):
        add("embedding", rng.standard_normal(width), tok)
        for layer in range(layers):
            for name in CHECKPOINTS:
                add(name, rng.standard_normal(width), tok, layer)
        add("logits", rng.standard_normal(vocab) * 3, tok)
    return out


def from_layer(token: int, layer: int, checkpoint: str, size: float = 0.5) -> Bug:
    """A bug that starts at (token, layer, checkpoint) and stays in every later layer of that and later tokens."""
    order = {c: i for i, c in enumerate(CHECKPOINTS)}

    def bug(t, lay, name):
        if t < token:
            return 0.0
        if name == "logits":
            return size * 4
        if lay is None:
            return 0.0
        return size if (lay, order[name]) >= (layer, order[checkpoint]) else 0.0

    return bug


def offset_pair(
    directory: Path, offset: float, tokens: int, layers: int, width: int, seed: int = 1
) -> tuple[Path, Path]:
    """Two full-mode binary traces of `l_out` at each token and layer, b's every element `offset` above a's:
    every pair fails, and with no logits to rule tokens out every token keeps its first failing pair."""
    rows = np.random.default_rng(seed).standard_normal((tokens * layers, width)).astype(np.float32)

    def write(name: str, add: float) -> Path:
        records = (
            record("l_out", rows[t * layers + layer] + np.float32(add), token_idx=t, layer=layer)
            for t in range(tokens)
            for layer in range(layers)
        )
        return emit(directory / name, records, mode="full")

    return write("a.bin", 0.0), write("b.bin", offset)
