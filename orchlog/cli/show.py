"""`orchlog show TRACE`: what a trace holds."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "show",
        help="what a trace holds: records, checkpoints, layers, tokens, steps, dtypes, producer",
        description="Summarise a trace file or directory (any supported format).",
        epilog="example:\n  orchlog show examples/traces/llama_reference.jsonl\n"
        "  orchlog show run/ --format json | jq .tokens",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", metavar="TRACE", help="trace file or directory")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from orchlog.read.writers import read_ahead

    with read_ahead():  # the lock table, read while the rest is imported
        return _show(args)


def _show(args: argparse.Namespace) -> int:
    from orchlog.errors import OrchlogError
    from orchlog.read.overview import overview
    from orchlog.read.paths import open_trace
    from orchlog.safe_text import for_terminal

    try:
        view = overview(open_trace(args.trace))
    except OSError as exc:
        raise OrchlogError(f"cannot read {args.trace}: {exc}") from None
    if args.format == "json":
        sys.stdout.write(json.dumps(view.to_json(), indent=1, default=str) + "\n")
    else:
        sys.stdout.write(for_terminal(str(view)))
    return 0
