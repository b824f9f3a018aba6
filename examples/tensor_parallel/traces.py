"""Write the MLP's traces: the unsharded twin as one file, a W-way run as one file per rank
(`rank0.bin`, `rank1.bin`, ... in a directory, which orchlog reads as one trace).

A sharded run says how each tensor is split in its log calls, with the record's shard fields
(`LAYOUT`), as an engine that knows its own layout does; `annotate=False` leaves them out, for
`orchlog compare --map-b shards.toml` to say the same thing (an engine that does not annotate)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import orchlog
from examples.tensor_parallel.mlp import Bug, make_input, make_weights, run

MAP = Path(__file__).resolve().parent / "shards.toml"
# Each record is one token's row, so one axis: the column-parallel tensors hold a slice of n_ff,
# the row-parallel one a partial sum. The replicated ones (ffn_norm, l_out) say nothing.
LAYOUT: dict[str, dict[str, Any]] = {
    "ffn_gate": {"shard_axis": 0},
    "ffn_up": {"shard_axis": 0},
    "ffn_swiglu": {"shard_axis": 0},
    "ffn_out": {"shard_partial": True},
}


def write_run(out: Path, ways: int = 1, bug: Bug = Bug.NONE, annotate: bool = True) -> Path:
    """The run's trace: `out` itself when unsharded, else a directory with one file per rank."""
    logged = run(make_weights(), make_input(), ways, bug)
    if ways > 1:
        out.mkdir(parents=True, exist_ok=True)
    for rank in range(ways):
        path = out / f"rank{rank}.bin" if ways > 1 else out
        orchlog.configure(path=str(path), mode="full", team=f"mlp-tp{ways}", select="", rank=rank, world_size=ways)
        try:
            for who, checkpoint, layer, tensor in logged:
                if who != rank:
                    continue
                layout = LAYOUT.get(checkpoint, {}) if annotate else {}
                for token, row in enumerate(tensor):
                    orchlog.log(checkpoint, np.ascontiguousarray(row), token_idx=token, layer=layer, step=0, **layout)
        finally:
            orchlog.close()
    return out
