"""A reference run and runs of an engine under test, plain or grafted, as full-tensor traces.

Each stage adds its own error (a constant offset, `errors[(layer, stage)]`) to what it was given;
a grafted stage's record holds the reference's tensor and hands it on, as orchlog.graft does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from tests.tracegen import record, write_frames

STAGES = ("attn_norm", "attn_out", "ffn_out", "l_out")
WIDTH = 16


def reference_tensors(layers: int, tokens: int) -> dict[tuple[int, int, str], np.ndarray]:
    rng = np.random.default_rng(3)
    return {
        (token, layer, stage): rng.standard_normal(WIDTH).astype(np.float32)
        for token in range(tokens)
        for layer in range(layers)
        for stage in STAGES
    }


def write_run(
    path: Path,
    layers: int,
    tokens: int,
    errors: Mapping[tuple[int, str], float] | None = None,
    grafted: frozenset[str] | set[str] = frozenset(),
) -> Path:
    """`errors` None: the reference itself; else the engine under test, with `grafted` stages grafted."""
    ref = reference_tensors(layers, tokens)
    out, seq = [], 0
    for token in range(tokens):
        carried = 0.0
        for layer in range(layers):
            for stage in STAGES:
                keys = {"token_idx": token, "layer": layer, "step": 0, "seq": seq}
                seq += 1
                if errors is not None and stage in grafted:
                    out.append(record(stage, ref[(token, layer, stage)], grafted=True, **keys))
                    carried = 0.0
                    continue
                if errors is not None:
                    carried += errors.get((layer, stage), 0.0)
                out.append(record(stage, ref[(token, layer, stage)] + np.float32(carried), **keys))
    return write_frames(path, out)
