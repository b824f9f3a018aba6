#!/usr/bin/env python3
"""Write the bundled guardrail example beside this script: the seed's prefill/decode matrix, complete.

    python examples/guardrail/make_example.py                    # rewrites config.json and runs/ here
    orchlog guardrail examples/guardrail                          # PASS_GUARDRAIL, exit 0
    python examples/guardrail/make_example.py /tmp/regressed --regression
    orchlog guardrail /tmp/regressed                              # FAIL_GUARDRAIL, exit 1

kv_aligned ∈ {0, 1} × seed ∈ {0, 1, 2}, each run with a prefill and a decode
side covering positions 16..19 of a 64-token vocabulary. kv_aligned=1 pairs
are exact copies (they must match, and do); kv_aligned=0 pairs carry
bf16-like noise (documented drift: recorded, never failing). The sides mix
the encodings teams have: gzipped and plain logits.jsonl, and an orchlog
trace (binary stream) in place of logits.jsonl. With --regression, decode
of kv_aligned=1 seed=1 parts ways from position 18 on.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a source checkout without installing

from examples.guardrail.artifacts import Pair, Tree  # noqa: E402

KV_ALIGNED = (0, 1)
SEEDS = (0, 1, 2)
ENCODINGS = {0: ("jsonl.gz", "jsonl.gz"), 1: ("jsonl", "jsonl.gz"), 2: ("jsonl.gz", "orchlog-bin")}
REGRESSION = {"kv_aligned": 1, "seed": 1, "position": 2}  # position 2 of the span: token 18


def make_example(root: Path, regression: bool = False) -> None:
    shutil.rmtree(root / "runs", ignore_errors=True)
    tree = Tree(root)
    tree.write_config(kv_aligned=list(KV_ALIGNED), seeds=list(SEEDS))
    for kv in KV_ALIGNED:
        for seed in SEEDS:
            broken = regression and (kv, seed) == (REGRESSION["kv_aligned"], REGRESSION["seed"])
            tree.write_pair(
                Pair(
                    {"kv_aligned": kv, "seed": seed},
                    drift=kv == 0,
                    encodings=ENCODINGS[seed],
                    diverge_at=REGRESSION["position"] if broken else None,
                )
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=HERE, help="where to write (default: beside this script)")
    parser.add_argument("--regression", action="store_true", help="make one must-match pair diverge")
    args = parser.parse_args()
    make_example(args.root, args.regression)
