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
than the reference's own noise should pass. Whether a bug can be told from the noise at its first place at
all depends on the quantization (a coarser one hides more): its error / noise there, measured on whole
tensors against the f32 file, says so, and the table counts the bugs at least 1.25x the noise ("visible")
apart from the others. docs/noise.md records the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.llama_cpp.run import build_programs
from examples.numpy_engine.bugs import Bug
from examples.quantized.models import f32_model
from examples.quantized.places import WHERE, WITHIN_NOISE, where
from examples.quantized.traces import engine, reference
from examples.qwen2_tiny.weights import DEFAULT_SEED
from orchlog.compare import CompareOptions, CompareReport, compare

METHODS = ("absolute", "default", "preset", "noise f32", "noise both")


def options(method: str, directory: Path, kind: str, mode: str, programs: Path) -> CompareOptions:
    refs = {"noise f32": ("f32",), "noise both": ("f32", f"{kind}-widened")}.get(method, ())
    tolerances = {"absolute": "absolute", "default": "default"}.get(method)
    noise = tuple(str(reference(directory, r, mode, programs=programs)) for r in refs)
    return CompareOptions(tolerances=tolerances, noise=noise, diagnose=False)


def visibility(directory: Path, kind: str, bug: Bug, programs: Path) -> float | None:
    """The bug's error / noise at its true place: whole tensors, against llama.cpp on the f32 file."""
    report = compare(
        reference(directory, kind, "full", programs=programs),
        engine(directory, kind, bug, "full", programs=programs),
        CompareOptions(
            noise=(str(reference(directory, "f32", "full", programs=programs)),),
            diagnose=False,
            detail=True,
            max_pairs=None,
        ),
    )
    for pair in report.findings.kept_pairs():
        if where(pair) == WHERE[bug] and pair.noise_ratio is not None:
            return pair.noise_ratio[0]
    return None


def verdict(report: CompareReport, bug: Bug) -> str:
    if bug is Bug.NONE or bug in WITHIN_NOISE:
        return "pass" if report.status == "ok" else "alarm"
    if report.status == "ok":
        return "false pass"
    return "located" if report.first is not None and where(report.first) == WHERE[bug] else "misplaced"


def run(seeds: int, kinds: list[str], work: Path | None) -> list[dict[str, Any]]:
    programs = build_programs()
    rows = []
    for s in range(seeds):
        seed = DEFAULT_SEED + 10 + s
        for kind in kinds:
            with tempfile.TemporaryDirectory(dir=work) as tmp:
                directory = Path(tmp)
                f32_model(directory, seed)
                ratio = {bug: visibility(directory, kind, bug, programs) for bug in WHERE}
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
                                    "bug": bug.label if bug else "clean",
                                    "method": method,
                                    "verdict": verdict(report, bug),
                                    "ratio_at_place": ratio.get(bug),
                                    "pairs": report.findings.pairs,
                                    "failed": report.findings.failed,
                                    "undecided": report.findings.undecided,
                                }
                            )
                print(f"seed {seed} {kind}: done", file=sys.stderr)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| type | mode | method | clean runs passing | clean pairs failing / undecided | visible bugs located | "
        "misplaced | false passes | hidden bugs (< 1.25x) passing | within-noise bugs passing |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    keys = sorted({(r["type"], r["mode"], r["method"]) for r in rows}, key=lambda k: (k[0], k[1], METHODS.index(k[2])))
    for kind, mode, method in keys:
        mine = [r for r in rows if (r["type"], r["mode"], r["method"]) == (kind, mode, method)]
        clean = [r for r in mine if r["bug"] == "clean"]
        placed = [r for r in mine if r["bug"] != "clean" and r["verdict"] not in ("pass", "alarm")]
        visible = [r for r in placed if (r["ratio_at_place"] or 0) >= 1.25]
        hidden = [r for r in placed if (r["ratio_at_place"] or 0) < 1.25]
        bugs = Counter(r["verdict"] for r in visible)
        within = [r for r in mine if r["bug"] in {b.label for b in WITHIN_NOISE}]
        pairs = sum(r["pairs"] for r in clean)
        out.append(
            f"| {kind} | {mode} | {method} | {sum(r['verdict'] == 'pass' for r in clean)}/{len(clean)} | "
            f"{sum(r['failed'] for r in clean)} / {sum(r['undecided'] for r in clean)} of {pairs} | "
            f"{bugs['located']}/{len(visible)} | {bugs['misplaced']} | {bugs['false pass']} | "
            f"{sum(r['verdict'] == 'false pass' for r in hidden)}/{len(hidden)} | "
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
