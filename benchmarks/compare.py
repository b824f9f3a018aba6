#!/usr/bin/env python3
"""Run the compare benchmarks and print their figures (ratios against baselines measured in the same run).

    .venv/bin/python benchmarks/compare.py all              # everything, at the sizes the docs quote
    .venv/bin/python benchmarks/compare.py jsonl --records 100000
    .venv/bin/python benchmarks/compare.py kernel --mib 64       # arrays, rows in memory, rows in mapped frames
    .venv/bin/python benchmarks/compare.py e2e --records 8 --tensor-mib 32 --json out.json
    .venv/bin/python benchmarks/compare.py e2e --format parquet     # one format of compare_e2e.FORMATS

Traces are written once under --work (default .cache/bench) and reused.
Timings are the best of --repeat runs; figures vary with what else the
machine is doing, the ratios much less (both sides run in the same minute).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import compare_e2e, compare_jsonl, compare_kernel
from benchmarks.compare_measure import ROOT, load_average, machine


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def _print(name: str, r: dict[str, Any]) -> None:
    print(f"\n[{name}]")
    if name == "jsonl":
        print(f"  {r['records']:,} records per trace, {_mb(r['trace_bytes'])} in all")
        for who, label in (("orchlog", "orchlog compare"), ("baseline", "first-script")):
            print(
                f"  {label:<17} {r[who + '_records_per_s']:>12,.0f} records/s  ({r[who + '_s']:.2f} s)"
                f"  peak RSS {_mb(r[who + '_peak_rss'])}"
            )
        print(
            f"  speed-up          {r['speedup']:.1f}x wall clock, {r['cpu_ratio']:.1f}x CPU time "
            f"({r['orchlog_cpu_s']:.2f} s vs {r['baseline_cpu_s']:.2f} s, all threads)"
        )
    elif name == "kernel":
        print(f"  two {r['array_mib']} MiB f32 arrays; floor a.max()+b.max() {r['floor_s'] * 1e3:.1f} ms")
        for key, label in (
            ("fused", "fused native, one pass"),
            ("numpy", "plain NumPy, one pass"),
            ("fused_with_p99", "native + exact p99"),
            ("two_calls_with_p99", "  as two calls"),
            ("numpy_with_p99", "NumPy + exact p99"),
        ):
            print(f"  {label:<24} {r[key + '_s'] * 1e3:8.1f} ms   {r[key + '_vs_floor']:.2f}x of the floor")
    else:
        print(f"  {r['format']}: {r['records']} pairs of {r['tensor_mib']} MiB tensors, {_mb(r['trace_bytes'])} in all")
        print(f"  orchlog compare   {r['orchlog_gb_s']:.2f} GB/s   peak RSS {_mb(r['orchlog_peak_rss'])}")
        print(f"  {'':<17} CPU time {r['orchlog_cpu_s']:.2f} s (all threads)")
        for base in ("pyarrow", "python"):
            print(
                f"  {base + ' read':<17} {r[base + '_read_gb_s']:.2f} GB/s"
                f"   orchlog is {r['orchlog_vs_' + base]:.2f}x of it; CPU time {r[base + '_cpu_s']:.2f} s, "
                f"orchlog {r['orchlog_vs_' + base + '_cpu']:.2f}x of it"
            )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("which", choices=("jsonl", "kernel", "e2e", "all"))
    p.add_argument("--records", type=int, help="jsonl: records per trace (1,000,000); e2e: tensor pairs (8)")
    p.add_argument("--mib", type=int, default=256, help="kernel: MiB per array (256)")
    p.add_argument("--tensor-mib", type=int, default=32, help="e2e: MiB per tensor (32)")
    p.add_argument(
        "--format",
        choices=list(compare_e2e.FORMATS),
        action="append",
        help="e2e: the trace format (repeatable; default: every one)",
    )
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"machine": machine(), "load_average_at_start": load_average()}
    print(f"machine: {out['machine']}; load average {out['load_average_at_start']:.1f}")
    if args.which in ("jsonl", "all"):
        out["jsonl"] = compare_jsonl.run(args.work, args.records or 1_000_000, args.repeat)
        _print("jsonl", out["jsonl"])
    if args.which in ("kernel", "all"):
        out["kernel"] = compare_kernel.run(args.mib, args.repeat + 2)
        _print("kernel", out["kernel"])
        out["kernel_rows"] = compare_kernel.rows(args.repeat + 2)
        r = out["kernel_rows"]
        print(
            f"  {r['pairs']:,} pairs of {r['width']} f32 rows in one call (floor: reading both, {r['floor_s'] * 1e3:.2f} ms)"
        )
        for key, label in (
            ("different", "pairs that differ"),
            ("different_without_p99", "  without the p99"),
            ("equal", "equal pairs"),
        ):
            print(f"  {label:<24} {r[key + '_s'] * 1e3:8.2f} ms   {r[key + '_vs_floor']:.2f}x of the floor")
        out["kernel_framed"] = r = compare_kernel.framed(args.work, args.repeat + 2)
        print(
            f"  {r['pairs']:,} pairs of rows a frame apart in mapped windows (floor: reading both windows,"
            f" {r['floor_s'] * 1e3:.2f} ms)"
        )
        print(
            f"  {'pairs that differ':<24} {r['kernel_s'] * 1e3:8.2f} ms   {r['kernel_vs_floor']:.2f}x of the floor"
            f"   ({r['ns_a_pair']:.0f} ns a pair)"
        )
    if args.which in ("e2e", "all"):
        out["e2e"] = {}
        for fmt in args.format or compare_e2e.FORMATS:
            out["e2e"][fmt] = compare_e2e.run(
                args.work,
                args.records if args.which == "e2e" and args.records else 8,
                args.tensor_mib,
                args.repeat,
                fmt,
            )
            _print("e2e", out["e2e"][fmt])
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
