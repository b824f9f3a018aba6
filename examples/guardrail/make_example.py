#!/usr/bin/env python3
"""Write the bundled guardrail example beside this script: the seed's prefill/decode matrix, complete.

    python examples/guardrail/make_example.py          # rewrites config.json and runs/ here
    orchlog guardrail examples/guardrail                # PASS_GUARDRAIL, exit 0

kv_aligned ∈ {0, 1} × seed ∈ {0, 1, 2}, each run with a prefill and a decode
side covering positions 16..19 of a 64-token vocabulary. kv_aligned=1 pairs
are exact copies (they must match, and do); kv_aligned=0 pairs carry
bf16-like noise (documented drift: recorded, never failing). The sides mix
the encodings teams have: gzipped and plain logits.jsonl, and one orchlog
trace (binary stream) in place of logits.jsonl.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a source checkout without installing

from examples.guardrail.artifacts import Pair, Tree  # noqa: E402

KV_ALIGNED = (0, 1)
SEEDS = (0, 1, 2)
ENCODINGS = {0: ("jsonl.gz", "jsonl.gz"), 1: ("jsonl", "jsonl.gz"), 2: ("jsonl.gz", "orchlog-bin")}


def make_example(root: Path) -> None:
    shutil.rmtree(root / "runs", ignore_errors=True)
    tree = Tree(root)
    tree.write_config(kv_aligned=list(KV_ALIGNED), seeds=list(SEEDS))
    for kv in KV_ALIGNED:
        for seed in SEEDS:
            tree.write_pair(Pair({"kv_aligned": kv, "seed": seed}, drift=kv == 0, encodings=ENCODINGS[seed]))


if __name__ == "__main__":
    make_example(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
