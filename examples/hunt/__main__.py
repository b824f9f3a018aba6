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

import sys

from examples import cli
from examples.hunt.run import ENGINES, prepare
from examples.hunt.stages import stage_table
from orchlog.compare import compare
from orchlog.llama.build import BuildError


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("examples.hunt", __doc__)
    parser.add_argument("--engine", choices=ENGINES, default="numpy", help="the engine under test (default numpy)")
    cli.bugs_option(parser)
    parser.add_argument("--stages", action="store_true", help="print each stage's agreement for both clean engines")
    cli.report_options(parser)
    args = parser.parse_args(argv)
    with cli.directory(args.out) as directory:
        try:
            if args.stages:
                print(stage_table({engine: prepare(directory, engine) for engine in ENGINES}))
                return 0
            hunt = prepare(directory, args.engine, args.bug)
        except (BuildError, RuntimeError, ValueError) as exc:
            return cli.error("hunt", exc)
        report = compare(hunt.reference, hunt.ours, hunt.options())
        cli.show(report, args.format)
        print("\n" + cli.same_comparison(hunt.command(), kept=args.out is not None))
        return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
