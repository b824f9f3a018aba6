#!/usr/bin/env python3
"""False alarms and false passes of each way of grading against a quantized reference, on real llama.cpp runs.

    .venv/bin/python benchmarks/noisy_reference.py                      # 2 models x q8_0, q4_k_m: ~15 minutes
    .venv/bin/python benchmarks/noisy_reference.py --seeds 4 --types q8_0,q4_k_m,q5_k_m --json out.json

For each model (random weights at Qwen2-0.5B widths, 8 layers, a seed of its own and none the shipped presets
were measured on), each llama.cpp file type and each mode (full tensors, summaries): llama.cpp on the
quantized file is the reference; llama.cpp on the f32 file, and on the quantized file's weights widened to
f32, are second references; the NumPy engine computes in f32 on the quantized file's weights, clean and with
each of its bugs. Every way of grading is then asked where the engine parts from the reference:

  absolute      the former default: max_abs 1e-2 (logits 1.0, embeddings 1e-3)
  default       the relative default: rel_l2 1e-3 (logits 1e-2, embeddings 1e-6)
  preset        the shipped preset of the file's type, picked from the records' weight types
  noise f32     three-way, --noise with llama.cpp on the f32 file
  noise both    three-way, --noise with both second references

and scored against the truth (examples/quantized/places.py): a clean run is a false alarm unless it passes;
a bug is located when the first divergence is its true step, token, layer and stage (failing, or undecided
there: the rerun decides it), a false pass when the compare passes, misplaced otherwise; the bugs smaller
than the reference's own noise should pass. docs/noise.md records the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.llama_cpp.run import build_programs  # noqa: E402
from examples.numpy_engine.bugs import Bug  # noqa: E402
from examples.quantized.models import f32_model  # noqa: E402
from examples.quantized.places import WHERE, WITHIN_NOISE, where  # noqa: E402
from examples.quantized.traces import engine, reference  # noqa: E402
from examples.qwen2_tiny.weights import DEFAULT_SEED  # noqa: E402
from orchlog.compare import CompareOptions, compare  # noqa: E402

METHODS = ("absolute", "default", "preset", "noise f32", "noise both")


def options(method: str, directory: Path, kind: str, mode: str, programs: Path) -> CompareOptions:
    refs = {"noise f32": ("f32",), "noise both": ("f32", f"{kind}-widened")}.get(method, ())
    tolerances = {"absolute": "absolute", "default": "default"}.get(method)
    noise = tuple(str(reference(directory, r, mode, programs=programs)) for r in refs)
    return CompareOptions(tolerances=tolerances, noise=noise, diagnose=False)


def verdict(report, bug: Bug) -> str:
    if bug is Bug.NONE or bug in WITHIN_NOISE:
        return "pass" if report.status == "ok" else "alarm"
    if report.status == "ok":
        return "false pass"
    return "located" if report.first is not None and where(report.first) == WHERE[bug] else "misplaced"


def run(seeds: int, kinds: list[str], work: Path | None) -> list[dict]:
    programs = build_programs()
    rows = []
    for s in range(seeds):
        seed = DEFAULT_SEED + 10 + s
        for kind in kinds:
            with tempfile.TemporaryDirectory(dir=work) as tmp:
                directory = Path(tmp)
                f32_model(directory, seed)
                for mode in ("full", "summary"):
                    ref = reference(directory, kind, mode, programs=programs)
                    for bug in (Bug.NONE, *WITHIN_NOISE, *WHERE):
                        ours = engine(directory, kind, bug, mode, programs=programs)
                        for method in METHODS:
                            report = compare(ref, ours, options(method, directory, kind, mode, programs))
                            rows.append(
                                {
                                    "seed": seed,
                                    "type": kind,
                                    "mode": mode,
                                    "bug": bug.name.lower() if bug else "clean",
                                    "method": method,
                                    "verdict": verdict(report, bug),
                                    "pairs": report.findings.pairs,
                                    "failed": report.findings.failed,
                                    "undecided": report.findings.undecided,
                                }
                            )
                print(f"seed {seed} {kind}: done", file=sys.stderr)
    return rows


def table(rows: list[dict]) -> str:
    out = [
        "| type | mode | method | clean runs passing | clean pairs failing / undecided | bugs located | misplaced | "
        "false passes | within-noise bugs passing |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    keys = sorted({(r["type"], r["mode"], r["method"]) for r in rows}, key=lambda k: (k[0], k[1], METHODS.index(k[2])))
    for kind, mode, method in keys:
        mine = [r for r in rows if (r["type"], r["mode"], r["method"]) == (kind, mode, method)]
        clean = [r for r in mine if r["bug"] == "clean"]
        bugs = Counter(r["verdict"] for r in mine if r["bug"] != "clean" and r["verdict"] not in ("pass", "alarm"))
        within = [r for r in mine if r["bug"] in {b.name.lower() for b in WITHIN_NOISE}]
        n_bugs = sum(bugs.values())
        pairs = sum(r["pairs"] for r in clean)
        out.append(
            f"| {kind} | {mode} | {method} | {sum(r['verdict'] == 'pass' for r in clean)}/{len(clean)} | "
            f"{sum(r['failed'] for r in clean)} / {sum(r['undecided'] for r in clean)} of {pairs} | "
            f"{bugs['located']}/{n_bugs} | {bugs['misplaced']} | {bugs['false pass']} | "
            f"{sum(r['verdict'] == 'pass' for r in within)}/{len(within)} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=2, help="models of random weights (default 2)")
    ap.add_argument("--types", default="q8_0,q4_k_m", help="llama.cpp file types (default q8_0,q4_k_m)")
    ap.add_argument("--work", type=Path, help="where the models go while measured (default: the system's temp)")
    ap.add_argument("--json", metavar="FILE", help="every compare's verdict as JSON")
    args = ap.parse_args()
    start = time.perf_counter()
    rows = run(args.seeds, [k for k in args.types.split(",") if k], args.work)
    print(table(rows))
    print(f"\n{len(rows)} compares, {time.perf_counter() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
