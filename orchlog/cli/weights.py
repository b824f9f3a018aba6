"""`orchlog weights A B`: compare two models' weights by name (GGUF, safetensors, .npz)."""

from __future__ import annotations

import argparse

from orchlog.cli.argtypes import nonnegative, unit_interval
from orchlog.cli.compare import _emit
from orchlog.errors import OrchlogError
from orchlog.safe_text import for_terminal

EXAMPLES = """example:
  orchlog weights model-f16.gguf hf_checkpoint/            # GGUF against HF safetensors shards (+ config.json)
  orchlog weights model.gguf model.safetensors --format json --output weights.json
  orchlog weights ours.npz theirs.npz --map none --threshold 1e-6

Names are paired by a shipped map (qwen2, llama) chosen from the GGUF's architecture, or --map. A weight
that matches only transposed, reshaped or with llama.cpp's Q/K row permutation is reported as such.

exit codes: 0 every weight matches, 1 a weight differs (or no names paired), 2 error"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "weights",
        help="compare two models' weights by name (GGUF, safetensors, .npz)",
        description="Pair two models' tensors by name (GGUF names mapped to HF names where needed), measure and "
        "grade each pair with compare's metrics and tolerance files, and name the weights that match only "
        "transposed or permuted.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", metavar="A", help="the reference weights: a GGUF, safetensors or .npz file, or a directory")
    p.add_argument("b", metavar="B", help="the weights to check, the same kinds")
    p.add_argument(
        "--map",
        default="auto",
        metavar="NAME|FILE",
        help="weight-name map: auto (default), none (same names), a shipped one (qwen2, llama) or a TOML file",
    )
    p.add_argument(
        "--tolerances", default="weights", metavar="FILE|NAME", help="tolerance file (default: the shipped 'weights')"
    )
    p.add_argument("--threshold", type=nonnegative, help="fail threshold for every rule, overriding the file")
    p.add_argument("--metric", help="graded metric for every rule (max_abs, mean_abs, max_rel, rms_diff, cosine, ...)")
    p.add_argument("--cos-tol", type=unit_interval, help="also fail weights whose cosine is below this")
    p.add_argument("--format", choices=("text", "json", "md"), default="text", help="report format (default text)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from orchlog.progress import Progress
    from orchlog.report import render
    from orchlog.weights import WeightsOptions, compare_weights

    opts = WeightsOptions(args.map, args.tolerances, args.metric, args.threshold, args.cos_tol)
    with Progress("comparing weights", quiet=args.quiet) as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.advance(done - bar.done)

        try:
            report = compare_weights(args.a, args.b, opts, progress=progress)
        except OSError as exc:
            raise OrchlogError(f"cannot read input: {exc}") from None
    text = render(report, args.format)
    if args.format in ("text", "md"):  # names from the weight files never reach a terminal as escape sequences
        text = for_terminal(text)
    _emit(text, args.output, args.color if args.format == "text" else "never")
    return report.exit_code
