"""Two full-tensor runs for the HTML report's tests: a prompt then decode steps, attention tensors in heads,
and a RoPE-like bug (one frequency of the rotation wrong) from a chosen token and layer on."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from orchlog.encoding.record import RecordInput
from tests.tracegen import record, write_frames

HEADS, HEAD_DIM, HIDDEN = 4, 16, 32
STAGES = ("attn_norm", "Qcur", "Kcur", "attn_out", "ffn_out", "l_out")


def rope_error(q: np.ndarray, index: int) -> np.ndarray:
    """q (heads, head_dim) rotated by a small wrong angle in the pair of dimensions (index, index + half)."""
    half = q.shape[-1] // 2
    out = q.copy()
    c, s = np.cos(0.3), np.sin(0.3)
    x, y = q[:, index], q[:, index + half]
    out[:, index], out[:, index + half] = x * c - y * s, x * s + y * c
    return out


def runs(
    tokens: int = 12, prompt: int = 8, layers: int = 4, bug_token: int = 9, bug_layer: int = 2
) -> tuple[list[RecordInput], list[RecordInput]]:
    """(reference, ours): prompt tokens share step 0, then one token per step; ours has the RoPE bug."""
    rng = np.random.default_rng(7)
    ref, ours, seq = [], [], 0
    for tok in range(tokens):
        step = 0 if tok < prompt else tok - prompt + 1
        plan = [("embedding", None)] + [(n, layer) for layer in range(layers) for n in STAGES] + [("logits", None)]
        for name, layer in plan:
            shape = (HEADS, HEAD_DIM) if name in ("Qcur", "Kcur") else (HIDDEN,)
            a = rng.standard_normal(shape).astype(np.float32)
            b = a.copy()
            broken = tok >= bug_token and layer is not None and layer >= bug_layer
            if broken and name == "Qcur":
                b = rope_error(a, 3).astype(np.float32)
            elif (broken and name in STAGES[STAGES.index("Qcur") + 2 :]) or (tok >= bug_token and name == "logits"):
                b = (a + 0.2).astype(np.float32)
            kw = {"token_idx": tok, "layer": layer, "step": step, "seq": seq}
            ref.append(record(name, a, **kw))
            ours.append(record(name, b, **kw))
            seq += 1
    return ref, ours


def write_runs(directory: Path, **kw) -> tuple[Path, Path]:
    ref, ours = runs(**kw)
    return write_frames(directory / "ref.bin", ref), write_frames(directory / "ours.bin", ours)
