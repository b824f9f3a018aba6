"""Two traces of a pretend model for the diagnosis tests: embd, then per layer attn_norm, Qcur (stages
`matmul`-less and `add`), attn_out, ffn_inp, l_out; full tensors, one record per token."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tests.tracegen import record, write_frames, write_jsonl

WIDTH = 32
STAGES = (("attn_norm", None), ("Qcur", None), ("Qcur", "add"), ("attn_out", None), ("ffn_inp", None), ("l_out", None))
# (checkpoint, stage, layer, token, values) -> ours' values
Bug = Callable[[str, str | None, int | None, int, np.ndarray, dict], np.ndarray]


def forward(tokens: int = 5, layers: int = 3, bug: Bug | None = None, seed: int = 0) -> list[tuple]:
    """(checkpoint, stage, layer, token, values) in execution order; `bug` rewrites ours' values."""
    rng = np.random.default_rng(seed)
    w_q = rng.standard_normal((layers, WIDTH, WIDTH)) / np.sqrt(WIDTH)
    b_q = 0.5 * rng.standard_normal((layers, WIDTH))
    w_o = rng.standard_normal((layers, WIDTH, WIDTH)) / np.sqrt(WIDTH)
    out: list[tuple] = []

    def emit(name, stage, layer, tok, seen, values):
        values = values.astype(np.float32)
        if bug is not None:
            values = bug(name, stage, layer, tok, values, seen).astype(np.float32)
        seen[(name, stage, layer)] = values
        out.append((name, stage, layer, tok, values))
        return values.astype(np.float64)

    for tok in range(tokens):
        seen: dict = {}
        x = emit("embd", None, None, tok, seen, rng.standard_normal(WIDTH))
        for layer in range(layers):
            h = emit("attn_norm", None, layer, tok, seen, x / np.sqrt(np.mean(x**2) + 1e-6))
            q = emit("Qcur", None, layer, tok, seen, w_q[layer] @ h)
            q = emit("Qcur", "add", layer, tok, seen, q + b_q[layer])
            a = emit("attn_out", None, layer, tok, seen, w_o[layer] @ np.tanh(q))
            f = emit("ffn_inp", None, layer, tok, seen, a + x)
            x = emit("l_out", None, layer, tok, seen, f + 0.1 * np.tanh(f))
    return out


def write(path: Path, run: list[tuple], summary: bool = False) -> Path:
    records = [
        record(name, values, stage=stage, layer=layer, token_idx=tok, step=0, seq=i, values=10)
        for i, (name, stage, layer, tok, values) in enumerate(run)
    ]
    return (write_jsonl if summary else write_frames)(path, records)


def traces(tmp_path: Path, bug: Bug, summary: bool = False, **kw) -> tuple[Path, Path]:
    ext = "jsonl" if summary else "bin"
    return (
        write(tmp_path / f"ref.{ext}", forward(**kw), summary),
        write(tmp_path / f"ours.{ext}", forward(bug=bug, **kw), summary),
    )


def missing_bias_from_layer(first: int) -> Bug:
    """Ours forgets Qcur's bias from layer `first` on: Qcur@add equals Qcur."""

    def bug(name, stage, layer, tok, values, seen):
        if name == "Qcur" and stage == "add" and layer is not None and layer >= first:
            return seen[("Qcur", None, layer)]
        return values

    return bug
