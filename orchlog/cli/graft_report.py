"""`orchlog graft-report REF GRAFTED...`: each stage's own error, from runs grafted from the reference."""

from __future__ import annotations

import argparse

from orchlog.cli.compare import _emit, add_alignment_arguments, alignment_options
from orchlog.errors import OrchlogError
from orchlog.safe_text import for_terminal

EXAMPLES = """example:
  ORCH_GRAFT_FROM=llama.bin ORCH_GRAFT_SELECT=checkpoint=l_out ORCH_LOG_FILE=grafted.bin ./engine
  orchlog graft-report llama.bin grafted.bin --plain ours.bin
  orchlog graft-report llama.bin graft-*.bin --plain ours.bin --format md    # one run per graft point
  orchlog graft-report llama.bin hf-grafted.bin --map-b hf_qwen2 --token-offset 1 --format json

A grafted record holds the reference's values and measures nothing; a record after a graft point in its
token measures the stages since it (its local error). docs/graft.md says which record measures what.

exit codes: 0 every local error proven within tolerance; 1 one fails or is undecided, or nothing was
measured (no grafted record, or none followed by a logged record); 2 error"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "graft-report",
        help="each stage's own error, from runs grafted from the reference (accumulation or a bug?)",
        description="Align each grafted run with the reference as `orchlog compare` does, and report per layer "
        "and stage the local error (its inputs grafted from the reference) beside the end-to-end error of a "
        "plain run, and name the stage with the largest local error.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("reference", metavar="REFERENCE", help="the reference trace the runs were grafted from")
    p.add_argument("grafted", metavar="GRAFTED", nargs="+", help="runs under test with grafted records")
    p.add_argument("--plain", metavar="PLAIN", help="a run under test without grafts: the end-to-end errors")
    add_alignment_arguments(p)
    p.add_argument(
        "--format", choices=("text", "json", "md", "html"), default="text", help="report format (default text)"
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from orchlog import heap
    from orchlog.compare import CompareOptions
    from orchlog.graft_report import graft_report
    from orchlog.progress import Progress
    from orchlog.report import render

    heap.keep_freed()
    opts = CompareOptions(**alignment_options(args))
    runs = len(args.grafted) + (args.plain is not None)
    with Progress("grafted runs", total=runs, quiet=args.quiet) as bar:
        try:
            report = graft_report(args.reference, args.grafted, args.plain, opts, progress=lambda: bar.advance(1))
        except OSError as exc:
            raise OrchlogError(f"cannot read input: {exc}") from None
    text = render(report, args.format)
    if args.format in ("text", "md"):
        text = for_terminal(text)
    _emit(text, args.output)
    return report.exit_code
