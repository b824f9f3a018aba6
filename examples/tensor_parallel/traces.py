"""Write the MLP's traces: the unsharded twin as one file, a W-way run as one file per rank
(`rank0.bin`, `rank1.bin`, ... in a directory, which orchlog reads as one trace)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import orchlog
from examples.tensor_parallel.mlp import Bug, make_input, make_weights, run

MAP = Path(__file__).resolve().parent / "shards.toml"


def write_run(out: Path, ways: int = 1, bug: Bug = Bug.NONE) -> Path:
    """The run's trace: `out` itself when unsharded, else a directory with one file per rank."""
    logged = run(make_weights(), make_input(), ways, bug)
    if ways > 1:
        out.mkdir(parents=True, exist_ok=True)
    for rank in range(ways):
        path = out / f"rank{rank}.bin" if ways > 1 else out
        orchlog.configure(path=str(path), mode="full", team=f"mlp-tp{ways}", select="", rank=rank, world_size=ways)
        try:
            for who, checkpoint, layer, tensor in logged:
                if who == rank:
                    for token, row in enumerate(tensor):
                        orchlog.log(checkpoint, np.ascontiguousarray(row), token_idx=token, layer=layer, step=0)
        finally:
            orchlog.close()
    return out
