"""A directory that holds one file per tensor (SGLang's dumper): how long `orchlog compare` and `orchlog show`
take on it, against `cat` of its files and against the compare of the same records packed into Parquet.

    .venv/bin/python -m benchmarks.tool_dumps [--steps 25] [--runs 5]

The dump is the one SGLang's own dumper wrote of the micro Qwen2 (tests/read/data/tools/sglang-clean, 82
files of one forward pass), copied once per step with the step renamed (`--steps 25`: 2,050 files of
4 KB); a second copy is the other side of the compare. Each command runs in a fresh process, in turns
(the medians of `--runs` turns are printed, with each command's time as a ratio to `cat` of both dumps in
the same turn).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.compare_measure import load_average, machine  # noqa: E402

SEED = ROOT / "tests" / "read" / "data" / "tools" / "sglang-clean" / "dump_micro"
ORCHLOG = [sys.executable, "-m", "orchlog"]


def make_dump(out: Path, steps: int) -> int:
    """The seed's files once per step, the step in each name renamed; the number of files."""
    files = sorted(SEED.iterdir())
    (out / SEED.name).mkdir(parents=True)
    for step in range(steps):
        for f in files:
            shutil.copy(f, out / SEED.name / f.name.replace("step=0___", f"step={step}___", 1))
    return len(files) * steps


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:4])} ...: exit {done.returncode}: {done.stderr[-500:]}")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.tool_dumps", description=__doc__)
    p.add_argument("--steps", type=int, default=25, help="forward passes in each dump (82 files each)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json", type=Path, help="write the figures here too")
    args = p.parse_args(argv)
    print(f"Machine: {machine()}; load average {load_average():.1f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        files = make_dump(a, args.steps)
        make_dump(b, args.steps)
        pa, pb = Path(tmp) / "a.parquet", Path(tmp) / "b.parquet"
        for d, packed in ((a, pa), (b, pb)):
            subprocess.run([*ORCHLOG, "pack", str(d), "-o", str(packed), "--quiet"], check=True)
        every = sorted(str(f) for d in (a, b) for f in (d / SEED.name).iterdir())
        commands = {
            "cat, both dumps": ["cat", *every],
            "orchlog show": [*ORCHLOG, "show", str(a)],
            "orchlog compare": [*ORCHLOG, "compare", str(a), str(b), "--quiet"],
            "orchlog compare, packed into Parquet": [*ORCHLOG, "compare", str(pa), str(pb), "--quiet"],
        }
        turns: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                turns[name].append(timed(command))
    cat = turns["cat, both dumps"]
    print(f"\n{files:,} files a side ({args.steps} steps), medians of {args.runs} turns:\n")
    print("| command | seconds | / `cat` (per-turn median) |\n|---|---:|---:|")
    figures = {}
    for name, times in turns.items():
        ratio = statistics.median(t / c for t, c in zip(times, cat))
        figures[name] = {"seconds": statistics.median(times), "ratio_to_cat": ratio}
        print(f"| {name} | {statistics.median(times):.3f} | {ratio:.1f}x |")
    print(f"\nload average {load_average():.1f} at the end")
    if args.json:
        args.json.write_text(json.dumps({"files": files, "machine": machine(), "figures": figures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
