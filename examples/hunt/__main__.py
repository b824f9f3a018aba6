"""Hunt a bug end to end: trace the tiny Qwen2 in llama.cpp and in an engine
under test, then let `orchlog compare` say where they part.

    python -m examples.hunt --bug rope_k_per_q_head     # the NumPy engine with a bug vs llama.cpp
    python -m examples.hunt                             # the clean NumPy engine: agrees, exit 0
    python -m examples.hunt --engine hf                 # HF transformers (orchlog.torch) vs llama.cpp
    python -m examples.hunt --stages                    # how closely each stage agrees, both engines

The first run builds llama.cpp (cached, a few minutes on two cores); then a
hunt takes seconds. Traces go to --out (default: a temporary directory), and
the report ends with the `orchlog compare` command that reproduces it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from examples.hunt.run import ENGINES, prepare
from examples.hunt.stages import stage_table
from examples.numpy_engine.bugs import ALL_BUGS, Bug
from orchlog.compare import compare
from orchlog.llama.build import BuildError
from orchlog.report import render_markdown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.hunt", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--engine", choices=ENGINES, default="numpy", help="the engine under test (default numpy)")
    parser.add_argument(
        "--bug",
        default="",
        help="NumPy engine bugs, comma-separated, from: " + ", ".join(b.label for b in ALL_BUGS),
    )
    parser.add_argument("--stages", action="store_true", help="print each stage's agreement for both clean engines")
    parser.add_argument("--out", type=Path, help="keep the model and traces in this directory")
    parser.add_argument("--format", choices=("text", "md"), default="text")
    args = parser.parse_args(argv)
    try:
        bugs = Bug.parse(args.bug)
    except ValueError as exc:
        parser.error(str(exc))
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.out or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        try:
            if args.stages:
                print(stage_table({engine: prepare(directory, engine) for engine in ENGINES}))
                return 0
            hunt = prepare(directory, args.engine, bugs)
        except (BuildError, RuntimeError, ValueError) as exc:
            print(f"hunt: error: {exc}", file=sys.stderr)
            return 2
        report = compare(hunt.reference, hunt.ours, hunt.options())
        print(render_markdown(report) if args.format == "md" else report)
        print(f"\nthe same comparison: {hunt.command()}" + ("" if args.out else "  (traces kept with --out DIR)"))
        return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
