"""Random multi-rank trace pairs for the partitioned compare's tests: one file per rank (some files
holding two ranks), mixed formats, bugs in random ranks, records missing, malformed lines, stray files."""

from __future__ import annotations

import random
from pathlib import Path

from tests.compare.runs import CHECKPOINTS, from_layer, run
from tests.tracegen import header, write_frames, write_jsonl, write_parquet

WRITERS = (write_jsonl, write_frames, write_parquet)


def rank_trace_pair(root: Path, seed: int, ranks: int = 4, tokens: int = 3) -> tuple[Path, Path]:
    rng = random.Random(seed)
    bugs = {r: from_layer(rng.randrange(tokens), rng.randrange(3), rng.choice(CHECKPOINTS), rng.choice([0.5, 1e-3]))
            for r in range(ranks) if rng.random() < 0.5}  # fmt: skip
    files = list(range(ranks))
    if ranks > 2 and rng.random() < 0.5:  # two ranks in one file
        files = [r for r in files if r != 1]
    for side in "ab":
        d = root / side
        d.mkdir(parents=True, exist_ok=True)
        for f in files:
            members = (f, 1) if f == 0 and 1 not in files else (f,)
            recs = []
            for r in members:
                bug = bugs.get(r) if side == "b" else None
                recs += run(tokens=tokens, layers=3, bug=bug, rank=r, world_size=ranks, values=rng.choice([10, -1]))
            if side == "b" and rng.random() < 0.3:  # a record missing on one side
                del recs[rng.randrange(len(recs))]
            writer = rng.choice(WRITERS)
            path = d / f"rank{f:02d}.{writer.__name__[6:]}"
            writer(path, recs, header(rank=f, team=f"team-{side}"))
            if writer is write_jsonl and rng.random() < 0.3:
                with open(path, "a", encoding="utf-8") as out:
                    out.write('{"checkpoint": "broken", "token_idx": \n')
        if rng.random() < 0.3:
            (d / "notes.txt").write_text("not a trace\n")
    return root / "a", root / "b"
