"""`orchlog calibrate A B [A2 B2 ...] -o noise.toml`: learn each stage's natural noise from known-good pairs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from orchlog.cli.argtypes import positive_float
from orchlog.errors import OrchlogError

EXAMPLES = """example:
  orchlog calibrate llama-q8_0.bin llama-f32.bin -o q8_0-noise.toml
  orchlog calibrate ref-p1.bin other-p1.bin ref-p2.bin other-p2.bin --headroom 2 -o noise.toml
  orchlog compare llama-q8_0.bin ours.bin --tolerances q8_0-noise.toml

Each pair is two runs believed correct (the reference beside llama.cpp on the f32 file, or beside another
backend; several prompts make a better envelope). The file holds, per checkpoint, stage and layer, a
threshold on rel_l2 = |a - b| / |a|: headroom times the largest difference seen, with a growth model for
layers deeper than those calibrated (docs/noise.md).

exit codes: 0 written; 2 error"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "calibrate",
        help="learn each stage's natural noise from known-good pairs of runs: a tolerance file",
        description="Walk each known-good pair of traces as `orchlog compare` would, and write a tolerance "
        "file whose thresholds are each checkpoint's, stage's and layer's largest relative difference times "
        "a headroom.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("traces", metavar="A B", nargs="+", help="pairs of traces of runs believed correct: A B [A2 B2 ...]")
    p.add_argument("--output", "-o", metavar="FILE", required=True, help="the tolerance file to write (TOML)")
    p.add_argument(
        "--headroom",
        type=positive_float,
        default=None,
        metavar="H",
        help="thresholds are H times the largest difference seen (default 1.5)",
    )
    p.add_argument("--key", help="fields records align on (as for compare)")
    for flag, side in (
        ("--map", ""),
        ("--map-a", " for each first trace only"),
        ("--map-b", " for each second trace only"),
    ):
        p.add_argument(flag, action="append", default=[], metavar="FILE|NAME", help=f"name map(s){side} (repeatable)")
    p.add_argument("--window", action="append", default=[], metavar="GLOB", help="as for compare (repeatable)")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary line")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from orchlog import heap
    from orchlog.compare import CompareOptions
    from orchlog.compare.calibrate import DEFAULT_HEADROOM, calibrate_pairs, tolerance_file
    from orchlog.compare.pairing.keys import parse_key

    heap.keep_freed()
    if len(args.traces) % 2:
        raise OrchlogError(f"calibrate takes pairs of traces; {len(args.traces)} given (A B [A2 B2 ...])")
    pairs = list(zip(args.traces[::2], args.traces[1::2]))
    opts = CompareOptions(
        key=parse_key(args.key) if args.key else None,
        maps=args.map,
        maps_a=args.map_a,
        maps_b=args.map_b,
        windows=tuple(args.window),
        diagnose=False,
    )
    try:
        calibration = calibrate_pairs(pairs, opts)
    except OSError as exc:
        raise OrchlogError(f"cannot read input: {exc}") from None
    if not calibration.envelopes:
        raise OrchlogError("no record of the pairs found a partner: nothing to calibrate (check --key and --map)")
    headroom = DEFAULT_HEADROOM if args.headroom is None else args.headroom
    created = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = tolerance_file(calibration, headroom, created)
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OrchlogError(f"--output {args.output}: cannot write ({exc.strerror})") from None
    if not args.quiet:
        places = len(calibration.envelopes)
        print(
            f"calibrated {places} checkpoint/stage/layer places from {len(pairs)} pair(s) "
            f"({calibration.exact_pairs} pairs of whole tensors, {calibration.bounded_pairs} of summaries); "
            f"wrote {args.output}; grade with: orchlog compare REF OURS --tolerances {args.output}",
            file=sys.stderr,
        )
    return 0
