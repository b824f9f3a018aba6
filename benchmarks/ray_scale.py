#!/usr/bin/env python3
"""A compare split by rank over a local two-node Ray cluster against the same compare in one process.

    .venv/bin/python benchmarks/ray_scale.py --ranks 4 --records 100000 --runs 3
    .venv/bin/python benchmarks/ray_scale.py --ranks 8 --records 800000 --cpus-per-node 4

Writes two full-mode traces of `--ranks` per-rank binary streams (hidden-state
rows of 896 f32, b = a plus noise), starts a `ray.cluster_utils.Cluster` of
`--nodes` nodes of `--cpus-per-node` CPUs each on this machine (not timed: a
real cluster is up before anyone compares), then runs, in turn `--runs` times,
`orchlog compare A B --format json` in one process and the same with
`--executor ray:ADDRESS --parts P` (P: `--parts`, by default every CPU of the
cluster; each a whole process: connecting to the cluster, planning, shipping
the tasks and merging are in the time). The two JSON reports must be
identical. Reported: medians, and one process's time over the cluster's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.compare_measure import ROOT, machine, uptime
from benchmarks.compare_speed import ORCHLOG, interleaved

HIDDEN = 896
CHECKPOINTS = ("attn_norm", "attn_out", "ffn_inp", "ffn_out", "l_out")


def _write_rank(root: Path, side: str, rank: int, rows: int, layers: int) -> None:
    """One rank's binary stream of one side, written by the C++ core (b = a plus noise)."""
    import orchlog

    rng = np.random.default_rng(0)
    pool = rng.standard_normal((4096, HIDDEN), dtype=np.float32)
    noise = (rng.standard_normal((4096, HIDDEN), dtype=np.float32) * np.float32(1e-3)).astype(np.float32)
    keys = [(layer, name) for layer in range(layers) for name in CHECKPOINTS]
    orchlog.configure(path=str(root / side / f"rank{rank}.bin"), team=side, mode="full")
    for i in range(rows):
        row = pool[i % 4096] if side == "a" else pool[i % 4096] + noise[(i * 7 + rank) % 4096]
        layer, name = keys[i % len(keys)]
        orchlog.log(name, row, token_idx=i // len(keys), layer=layer, step=0, rank=rank)
    orchlog.close()


def write_rank_traces(root: Path, ranks: int, records: int, layers: int = 24) -> tuple[Path, Path]:
    """Per side a directory of one binary stream per rank, `records` rows in all, a process per file."""
    for side in ("a", "b"):
        (root / side).mkdir(parents=True, exist_ok=True)
    jobs = [(side, rank) for side in ("a", "b") for rank in range(ranks)]
    with ProcessPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
        for done in [pool.submit(_write_rank, root, side, rank, records // ranks, layers) for side, rank in jobs]:
            done.result()
    return root / "a", root / "b"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--records", type=int, default=100_000, help="records per side, all ranks together")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--cpus-per-node", type=int, default=1)
    p.add_argument("--parts", type=int, help="Ray tasks (default: every CPU of the cluster)")
    p.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    root = args.work / f"ranks_{args.ranks}_{args.records}"
    if not (root / "b" / f"rank{args.ranks - 1}.bin").exists():
        write_rank_traces(root, args.ranks, args.records)
    a, b = root / "a", root / "b"
    from ray.cluster_utils import Cluster

    parts = args.parts or args.nodes * args.cpus_per_node
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": args.cpus_per_node})
    for _ in range(args.nodes - 1):
        cluster.add_node(num_cpus=args.cpus_per_node)
    cluster.wait_for_nodes()
    try:
        out: dict[str, Any] = {"machine": machine(), "uptime_at_start": uptime()}
        print(f"machine: {out['machine']}; {out['uptime_at_start']}")
        one, two = root / "one.json", root / "ray.json"
        common = [*ORCHLOG, "compare", str(a), str(b), "-q", "--no-diagnose", "--format", "json"]
        cases = {
            "one_process": [*common, "-o", str(one)],
            "ray": [*common, "-o", str(two), "--executor", f"ray:{cluster.address}", "--parts", str(parts)],
        }
        for name, cmd in cases.items():  # once untimed: the page cache warm, and a failing case said at once
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode not in (0, 1):  # 1: the traces differ, as they do
                sys.exit(f"{name}: exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        res = interleaved(cases, args.runs)
        assert one.read_bytes() == two.read_bytes(), "the cluster's report differs from one process's"
        size = sum(f.stat().st_size for d in (a, b) for f in d.iterdir())
        out.update(
            {
                "ranks": args.ranks,
                "nodes": args.nodes,
                "cpus_per_node": args.cpus_per_node,
                "parts": parts,
                "records_per_side": args.records,
                "trace_bytes": size,
                **res,
                "speedup_wall": res["one_process"]["wall_s"] / res["ray"]["wall_s"],
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
