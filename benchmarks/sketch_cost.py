#!/usr/bin/env python3
"""What the sketch costs each emitter, as a ratio to the BLAKE3 hash beside it in every record.

    .venv/bin/python benchmarks/sketch_cost.py            # about a minute
    .venv/bin/python benchmarks/sketch_cost.py --quick --json out.json

Builds benchmarks/bench_sketch.cpp as an engine would (-O2, no -march: the
kernels are picked at run time); it times the sketch and BLAKE3 over the same
f32 tensors (896 elements and 1 MiB), and the sketch with the stats a record
gathers in the same pass, in alternating batches, and keeps each one's fastest
batch. The C ABI and the Python emitter run the C++ header's
code; the Rust crate's sketch, private since records carry it, is timed within
a record by its emitter bench (docs/rust.md). Prints Markdown for docs/compare.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.compare_measure import load_average, machine  # noqa: E402
from benchmarks.emitters import CACHE, _json_lines, _run  # noqa: E402


def cpp_rows(quick: bool) -> list[dict[str, Any]]:
    exe = CACHE / "bench" / "bench_sketch"
    exe.parent.mkdir(parents=True, exist_ok=True)
    _run(
        [
            "g++",
            "-std=c++17",
            "-O2",
            f"-I{ROOT / 'native/cpp/include'}",
            str(ROOT / "benchmarks" / "bench_sketch.cpp"),
            "-o",
            str(exe),
        ]
    )
    return [
        {**row, "emitter": "C++ (also C, Python)"} for row in _json_lines(_run([str(exe), "300" if quick else "1500"]))
    ]


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| emitter | sketch kernel | BLAKE3 | tensor | sketch | sketch and stats | BLAKE3 | sketch / BLAKE3 "
        "| (thread CPU time) | sketch and stats / BLAKE3 |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        size = "896 f32" if r["elements"] == 896 else f"{r['elements'] * 4 >> 20} MiB f32"
        cpu = f"{r['sketch_cpu_s'] / r['blake3_cpu_s']:.2f}" if "sketch_cpu_s" in r else ""
        with_stats = r["sketch_stats_s"]
        out.append(
            f"| {r['emitter']} | {r['path']} | {r['blake3_path']} | {size} | {r['sketch_s'] * 1e6:.2f} µs | "
            f"{with_stats * 1e6:.2f} µs | {r['blake3_s'] * 1e6:.2f} µs | **{r['sketch_s'] / r['blake3_s']:.2f}** | "
            f"{cpu} | {with_stats / r['blake3_s']:.2f} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    load = load_average()
    start = time.strftime("%Y-%m-%d %H:%M")
    try:
        rows = cpp_rows(args.quick)
    except subprocess.CalledProcessError as exc:
        sys.exit(f"benchmark failed: {exc.stderr}")
    print(f"{machine()}, load average {load:.1f} at the start ({start})\n")
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine(), "load": load, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
