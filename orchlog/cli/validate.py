"""`orchlog validate TRACE`: schema checks, and hash checks where the data is there."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "validate",
        help="check a trace against the schema (and its hashes with --verify-hashes); exit 1 on problems",
        description="Check every record of a trace file or directory against the orchlog schema, report malformed "
        "input by file and line (or byte offset), and with --verify-hashes recompute each record's BLAKE3 "
        "from its data wherever the data is present, whatever the format.",
        epilog="example:\n  orchlog validate run.jsonl\n  orchlog validate run.bin --verify-hashes --format json\n\n"
        "exit codes: 0 valid, 1 problems found, 2 unreadable input",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", metavar="TRACE", help="trace file or directory")
    p.add_argument("--verify-hashes", action="store_true", help="recompute BLAKE3 over every record that has its data")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from orchlog.read.writers import read_ahead

    with read_ahead():  # the lock table, read while the rest is imported
        return _validate(args)


def _validate(args: argparse.Namespace) -> int:
    from orchlog import heap
    from orchlog.errors import OrchlogError
    from orchlog.progress import Progress
    from orchlog.read.paths import open_trace
    from orchlog.read.validate import validate
    from orchlog.safe_text import for_terminal

    heap.keep_freed()
    try:
        trace = open_trace(args.trace)
        with Progress("validating", total=trace.size or None, quiet=args.quiet, unit="B") as bar:
            report = validate(
                trace,
                verify_hashes=args.verify_hashes,
                progress=lambda fraction: bar.advance(max(0, int(fraction * (trace.size or 0)) - bar.done)),
            )
    except OSError as exc:
        raise OrchlogError(f"cannot read {args.trace}: {exc}") from None
    if args.format == "json":
        sys.stdout.write(json.dumps(report.to_json(), indent=1) + "\n")
    else:
        from orchlog.cli.colour import for_stream

        sys.stdout.write(for_stream(for_terminal(str(report)), sys.stdout, args.color))
    return report.exit_code
