"""The outputs held byte for byte by tests/report/test_golden_outputs.py: every report format of every command
on the committed example traces, and on a hunt's traces (tests/report/hunt/: llama.cpp against the NumPy
engine with a real port's bug, as `python -m examples.hunt --bug rope_k_per_q_head --out DIR` wrote them,
packed with `orchlog pack` to a tenth of their size).

    .venv/bin/python -m tests.report.golden --update     # write tests/report/golden/ anew (after a change to
                                                         # the reports that is meant; review the diff)

Each case is one command line, run in the repository root with paths relative to it, its output written
to stdout (`-o` files read back for guardrail); the golden file is that output exactly.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
DEMO = ("examples/traces/llama_reference.jsonl", "examples/traces/engine_under_test.jsonl")
HUNT = ("tests/report/hunt/llama.parquet", "tests/report/hunt/numpy-rope_k_per_q_head.parquet")
HUNT_OPTIONS = ("--tolerances", "examples/hunt/tolerances.toml", "--window", "kq*")
FORMATS = ("text", "md", "html", "json")

# name -> arguments of `orchlog`; each is run once per format it takes.
CASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "compare-demo": (("compare", *DEMO), FORMATS),
    "compare-identical": (("compare", DEMO[0], DEMO[0]), FORMATS),
    "compare-detail": (("compare", *DEMO, "--detail", "--top", "3", "--no-diagnose"), ("text", "md")),
    "compare-three-way": (("compare", *DEMO, "--noise", DEMO[0]), ("text", "md", "json")),
    "compare-absolute": (("compare", *DEMO, "--tolerances", "absolute", "--diagnose-worst", "2"), ("text",)),
    "compare-per-token": (("compare", *DEMO, "--per-token"), ("text", "md", "json")),
    # Text and Markdown only: JSON and the page print full-tensor metrics at full precision, whose last
    # bits follow the kernels' vector width (ORCHLOG_ISA avx512/avx2/sse4/baseline differ there, and
    # agree on these two).
    "compare-hunt": (("compare", *HUNT, *HUNT_OPTIONS), ("text", "md")),
    "compare-hunt-per-token": (("compare", *HUNT, "--per-token"), ("text",)),
    "guardrail": (("guardrail", "examples/guardrail", "--output-dir", "{tmp}"), ("text", "md", "json")),
}


def run(args: tuple[str, ...], fmt: str, tmp: Path) -> bytes:
    argv = [a.replace("{tmp}", str(tmp)) for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "orchlog", *argv, "--format", fmt, "--quiet"], cwd=ROOT, capture_output=True
    )
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"orchlog {' '.join(argv)} --format {fmt}: exit {proc.returncode}\n{proc.stderr.decode()}")
    return proc.stdout.replace(str(tmp).encode(), b"{tmp}")


def outputs(tmp: Path) -> dict[str, bytes]:
    """Every case's output in every format it takes, by golden file name."""
    out = {}
    for name, (args, formats) in CASES.items():
        for fmt in formats:
            out[f"{name}.{ {'text': 'txt', 'md': 'md', 'html': 'html', 'json': 'json'}[fmt] }"] = run(args, fmt, tmp)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help="rewrite the golden files")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = outputs(Path(tmp))
    if args.update:
        GOLDEN.mkdir(exist_ok=True)
        for old in GOLDEN.iterdir():
            old.unlink()
        for name, data in found.items():
            (GOLDEN / name).write_bytes(data)
        print(f"wrote {len(found)} files to {GOLDEN}")


if __name__ == "__main__":
    main()
