"""`orchlog guardrail DIR`: do the pairs of runs that must agree (prefill vs decode, ...) still agree?"""

from __future__ import annotations

import argparse
import sys

from orchlog.cli.argtypes import executor, nonnegative, positive_int
from orchlog.errors import OrchlogError

EXAMPLES = """example:
  orchlog guardrail examples/guardrail
  orchlog guardrail artifacts/b3_67 --output-dir /tmp/b3_67 --format json | jq .verdict
  orchlog guardrail artifacts/batch_ab --config batch_ab.json --max-abs-diff 1e-2
  orchlog guardrail artifacts/b3_67 --jobs 4          # or --executor ray:HEAD:6379

DIR holds runs/kv_aligned_{0,1}/seed_{N}/{prefill,decode}/ with logits.jsonl(.gz) (or an
orchlog trace) and metadata.json, and optionally config.json declaring the matrix
(see docs/guardrail.md, also for other matrices: batch size, dtype, kernels).
Writes summary.json, metrics/, EQUIVALENCE_GUARDRAIL.md and .html into DIR (or --output-dir).

exit codes: 0 PASS_GUARDRAIL, PASS_GUARDRAIL_LOCAL, EXPECTED_DRIFT_ONLY;
            1 FAIL_GUARDRAIL, INCOMPLETE; 2 error"""

# flag -> threshold it sets
THRESHOLD_FLAGS = {
    "--p99-abs-diff": "p99_abs_diff",
    "--max-abs-diff": "max_abs_diff",
    "--top1-agreement": "top1_agreement",
    "--cos-sim-mean": "cos_sim_mean",
    "--kl-max": "kl_max",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "guardrail",
        help="equivalence guardrail: pairs of runs that must match (prefill vs decode, ...) over a matrix",
        description="Compare the logits of every pair of runs in an artifact directory, give each pair a verdict "
        "(PASS_EQUIV, FAIL_EQUIV, EXPECTED_DRIFT, PAIRING_ERROR), check the declared matrix is complete, "
        "and give the global verdict with the first failing pair and token.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("directory", metavar="DIR", help="the artifact directory (runs/ and an optional config.json)")
    p.add_argument("--config", metavar="FILE", help="read the matrix from FILE instead of DIR/config.json")
    p.add_argument("--output-dir", metavar="OUT", help="write summary.json, metrics/ and the report here (default DIR)")
    p.add_argument(
        "--format",
        choices=("text", "json", "md", "html"),
        default="text",
        help="what to print: the text report, summary.json, the Markdown or the HTML report (default text)",
    )
    bounds = p.add_argument_group("thresholds (override config.json; defaults p99 1e-3, max 5e-3, top-1 0.999)")
    defaults = {"p99_abs_diff": "1e-3", "max_abs_diff": "5e-3", "top1_agreement": "0.999"}
    for flag, name in THRESHOLD_FLAGS.items():
        upper = "at least" if name in ("top1_agreement", "cos_sim_mean") else "at most"
        bounds.add_argument(
            flag,
            dest=name,
            type=nonnegative,
            metavar="X",
            help=f"must-match pairs need {name} {upper} X"
            + (f" (default {defaults[name]})" if name in defaults else " (default: not checked)"),
        )
    p.add_argument(
        "--jobs", "-j", type=positive_int, default=1, metavar="N", help="check N pairs at once (worker processes)"
    )
    p.add_argument(
        "--executor",
        type=executor,
        default=("local", None),
        metavar="local|ray[:ADDRESS]",
        help="check pairs as Ray tasks on a Ray instance started here (ray) or a running cluster (ray:ADDRESS)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from orchlog.guardrail import GuardrailOptions, guardrail
    from orchlog.progress import Progress
    from orchlog.report import render
    from orchlog.report.guardrail_files import write_outputs
    from orchlog.safe_text import for_terminal

    thresholds = {name: getattr(args, name) for name in THRESHOLD_FLAGS.values() if getattr(args, name) is not None}
    options = GuardrailOptions(config=args.config, thresholds=thresholds, jobs=args.jobs, executor=args.executor)
    try:
        with Progress("guardrail", quiet=args.quiet, unit="pairs") as bar:
            result = guardrail(args.directory, options, progress=lambda pair: bar.advance())
    except OSError as exc:
        raise OrchlogError(f"cannot read {exc.filename or args.directory}: {exc.strerror or exc}") from None
    write_outputs(result, args.output_dir or args.directory)
    text = render(result, args.format)
    if args.format == "text":
        from orchlog.cli.colour import for_stream

        text = for_stream(for_terminal(text), sys.stdout, args.color)
    elif args.format == "md":
        text = for_terminal(text)
    sys.stdout.write(text)
    return result.exit_code
