#!/usr/bin/env python3
"""A compare split by rank over a local two-node Ray cluster against the same compare in one process.

    .venv/bin/python benchmarks/ray_scale.py --ranks 4 --records 100000 --runs 3

Writes two full-mode traces of `--ranks` per-rank binary streams (hidden-state
rows of 896 f32, b = a plus noise), starts a `ray.cluster_utils.Cluster` of two
nodes of one CPU each on this machine (not timed: a real cluster is up before
anyone compares), then runs, in turn `--runs` times, `orchlog compare A B
--format json` in one process and the same with `--executor ray:ADDRESS
--parts 2` (each a whole process: connecting to the cluster, planning,
shipping the tasks and merging are in the time). The two JSON reports must be
identical. Reported: medians, and one process's time over the cluster's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.compare_measure import ROOT, machine, uptime
from benchmarks.compare_speed import ORCHLOG, interleaved

HIDDEN = 896
CHECKPOINTS = ("attn_norm", "attn_out", "ffn_inp", "ffn_out", "l_out")


def write_rank_traces(root: Path, ranks: int, records: int, layers: int = 24) -> tuple[Path, Path]:
    """Per side a directory of one binary stream per rank, `records` rows in all, written by the C++ core."""
    import orchlog

    rng = np.random.default_rng(0)
    pool = rng.standard_normal((4096, HIDDEN), dtype=np.float32)
    noise = (rng.standard_normal((4096, HIDDEN), dtype=np.float32) * np.float32(1e-3)).astype(np.float32)
    keys = [(layer, name) for layer in range(layers) for name in CHECKPOINTS]
    for side, delta in (("a", None), ("b", noise)):
        (root / side).mkdir(parents=True, exist_ok=True)
        for rank in range(ranks):
            orchlog.configure(path=str(root / side / f"rank{rank}.bin"), team=side, mode="full")
            for i in range(records // ranks):
                row = pool[i % 4096] if delta is None else pool[i % 4096] + delta[(i * 7 + rank) % 4096]
                layer, name = keys[i % len(keys)]
                orchlog.log(name, row, token_idx=i // len(keys), layer=layer, step=0, rank=rank)
            orchlog.close()
    return root / "a", root / "b"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--records", type=int, default=100_000, help="records per side, all ranks together")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    root = args.work / f"ranks_{args.ranks}_{args.records}"
    if not (root / "b" / f"rank{args.ranks - 1}.bin").exists():
        write_rank_traces(root, args.ranks, args.records)
    a, b = root / "a", root / "b"
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        out = {"machine": machine(), "uptime_at_start": uptime()}
        print(f"machine: {out['machine']}; {out['uptime_at_start']}")
        one, two = root / "one.json", root / "ray.json"
        common = [*ORCHLOG, "compare", str(a), str(b), "-q", "--no-diagnose", "--format", "json"]
        cases = {
            "one_process": [*common, "-o", str(one)],
            "ray_two_workers": [*common, "-o", str(two), "--executor", f"ray:{cluster.address}", "--parts", "2"],
        }
        res = interleaved(cases, args.runs)
        assert one.read_bytes() == two.read_bytes(), "the cluster's report differs from one process's"
        size = sum(f.stat().st_size for d in (a, b) for f in d.iterdir())
        out.update(
            {
                "ranks": args.ranks,
                "records_per_side": args.records,
                "trace_bytes": size,
                **res,
                "speedup_wall": res["one_process"]["wall_s"] / res["ray_two_workers"]["wall_s"],
                "identical_json": True,
                "uptime_at_end": uptime(),
            }
        )
    finally:
        import ray

        ray.shutdown()
        cluster.shutdown()
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
