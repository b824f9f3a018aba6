"""`orchlog compare A B`: where does B (ours) part ways with A (the reference)?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchlog.cli.argtypes import executor, nonnegative, nonnegative_int, positive_float, positive_int, unit_interval
from orchlog.errors import OrchlogError
from orchlog.safe_text import for_terminal

if TYPE_CHECKING:
    from orchlog.compare import CompareOptions, CompareReport
    from orchlog.compare.per_token import PerTokenReport
    from orchlog.read.trace import Trace
    from orchlog.read.writers import LockTable

LISTS_PAIRS = ("json", "html")  # the formats whose report lists the failing pairs

EXAMPLES = """example:
  orchlog compare reference.jsonl ours.jsonl
  orchlog compare llama.bin ours.bin --map example --track-token 12095 --dump-raw /tmp/diverged
  orchlog compare ref/ ours/ --key checkpoint,token_idx --tolerances my_tolerances.toml --format json
  orchlog compare ref_logits.jsonl.gz ours_logits.jsonl.gz --per-token --cos-tol 0.999
  orchlog compare reference.jsonl ours.jsonl --format html --output report.html
  orchlog compare llama.bin ours.bin --window 'kq*' --threshold 1e-4
  orchlog compare llama.bin hf.bin --map-b hf_qwen2 --token-offset 1
  orchlog compare reference.bin tp_run/                    # shards gathered by their records' layout
  orchlog compare reference.bin tp_run/ --map-b tp_shards.toml   # ... or by a map, for records that say none
  orchlog compare ref/ ours/ --require-all --allow-missing 'rope_cache*'   # CI: a cut-short trace fails
  orchlog compare run1.bin run2.bin --exact                                 # bit-exactness (determinism)
  orchlog compare llama-q8_0.bin ours.bin --noise llama-f32.bin             # graded against a second reference's noise
  orchlog compare ref_tp64/ ours_tp64/ --executor ray:head-node:6379 --format json -o report.json

exit codes: 0 every pair proven within tolerance; 1 a pair fails or is undecided (not proven either way),
token ids differ, nothing matched, or with --require-all a reference record has no partner or a line was
malformed; 2 error"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compare",
        help="align two traces and name the first diverging token, layer and stage",
        description="Align the records of two traces (any supported format, files or directories), measure and "
        "grade every pair, and name the first diverging token, then the earliest failing record at it.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", metavar="REFERENCE", help="the reference trace (file or directory)")
    p.add_argument("b", metavar="OURS", help="the trace under test (file or directory)")
    add_alignment_arguments(p)
    p.add_argument(
        "--track-token", type=nonnegative_int, metavar="ID", help="report this token's rank in each side's logits"
    )
    p.add_argument("--top", type=nonnegative_int, default=10, metavar="N", help="worst offenders to list (default 10)")
    p.add_argument("--detail", action="store_true", help="per-pair detail for every pair")
    p.add_argument(
        "--exact", action="store_true", help="only bit-identical tensors pass: any hash difference fails, in any format"
    )
    p.add_argument(
        "--require-all",
        action="store_true",
        help="fail (exit 1) when reference records have no partner in ours or lines were malformed",
    )
    p.add_argument(
        "--allow-missing",
        action="append",
        default=[],
        metavar="GLOB",
        help="with --require-all, reference checkpoints (as written or as mapped) allowed to have no partner "
        "(repeatable)",
    )
    p.add_argument(
        "--max-pairs",
        type=nonnegative_int,
        default=1000,
        metavar="N",
        help="failing pairs listed in the JSON `pairs` (default 1000; --detail lists all)",
    )
    p.add_argument(
        "--noise",
        action="append",
        default=[],
        metavar="REF2",
        help="a second run believed correct (llama.cpp on the f32 file beside the quantized one, HF in f32 "
        "beside bf16): its difference from REFERENCE is the noise each pair is graded against "
        "(repeatable: the largest noise counts; docs/noise.md)",
    )
    p.add_argument(
        "--noise-multiple",
        type=positive_float,
        default=None,
        metavar="K",
        help="with --noise, a pair passes when its error is proven below K times the noise (default 1.25)",
    )
    p.add_argument(
        "--map-noise",
        action="append",
        default=[],
        metavar="FILE|NAME",
        help="name map(s) for the --noise references only, tried before --map (repeatable)",
    )
    p.add_argument("--per-token", action="store_true", help="per-position logits parity: one line per token")
    p.add_argument(
        "--format",
        choices=("text", "json", "md", "html"),
        default="text",
        help="report format (default text; html is one page with charts, best with --output)",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--dump-raw", metavar="DIR", help="save the two tensors of the first divergence as .npy in DIR")
    p.add_argument("--dump-all", action="store_true", help="with --dump-raw, save every failing pair")
    p.add_argument(
        "--no-diagnose",
        dest="diagnose",
        action="store_false",
        help="skip the diagnosis of the first divergence (its bug signature; it reads the traces a second time)",
    )
    p.add_argument(
        "--diagnose-worst",
        type=nonnegative_int,
        default=0,
        metavar="N",
        help="also diagnose the N worst offenders (default 0; see docs/diagnose.md)",
    )
    p.add_argument(
        "--executor",
        type=executor,
        default=("local", None),
        metavar="local|ray[:ADDRESS]",
        help="where the work runs: this process (default), or split by rank into Ray tasks on a Ray instance "
        "started here (ray) or a running cluster (ray:ADDRESS), each where its files are; the same report "
        "(pip install 'orchlog[ray]'; docs/scale.md)",
    )
    p.add_argument(
        "--parts",
        type=positive_int,
        metavar="N",
        help="with --executor ray, the parts to split the work into: by rank, then Parquet traces by token range "
        "(default: the cluster's CPUs)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    p.set_defaults(func=_run)


def add_alignment_arguments(p: argparse.ArgumentParser) -> None:
    """How records are keyed, named, lined up and graded: shared by every command that aligns two traces."""
    p.add_argument(
        "--key",
        help="fields records align on, comma-separated "
        "(default checkpoint,layer,stage,token_idx,step,rank; legacy trace records: "
        "token_idx,layer,stage)",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FILE|NAME",
        help="name map(s) that turn each engine's names into canonical ones (repeatable; shipped: see docs/compare.md)",
    )
    p.add_argument(
        "--map-a",
        action="append",
        default=[],
        metavar="FILE|NAME",
        help="name map(s) for the reference only, tried before --map (repeatable)",
    )
    p.add_argument(
        "--map-b",
        action="append",
        default=[],
        metavar="FILE|NAME",
        help="name map(s) for the trace under test only, tried before --map (repeatable)",
    )
    p.add_argument(
        "--window",
        action="append",
        default=[],
        metavar="GLOB",
        help="checkpoints whose same-rank tensors of different extents (a padded KV cache) are compared on "
        "their common leading window and graded as usual (repeatable)",
    )
    p.add_argument(
        "--token-offset",
        type=int,
        default=0,
        metavar="N",
        help="b's position p is a's position p + N (1: a has a leading token more, such as a BOS; negative: b has)",
    )
    p.add_argument(
        "--tolerances",
        default=None,
        metavar="FILE|NAME",
        help="tolerance file or shipped name (default: the shipped 'default', relative; for a trace whose matrix "
        "products ran on quantized weights, the preset of that quantization, e.g. q8_0; see docs/noise.md)",
    )
    p.add_argument("--threshold", type=nonnegative, help="fail threshold for every rule, overriding the file")
    p.add_argument(
        "--metric",
        help="graded metric for every rule (max_abs, mean_abs, max_rel, p99_abs, rms_diff, l2, kl, cosine, top1_match)",
    )
    p.add_argument(
        "--cos-tol",
        type=unit_interval,
        help="also fail pairs whose cosine is below this (with --per-token: the per-position bound, default 0.999)",
    )
    p.add_argument(
        "--logits",
        action="append",
        metavar="GLOB",
        help="checkpoint names that are logits (repeatable; default logits, *logits*, result_output, lm_head, output)",
    )


def alignment_options(args: argparse.Namespace) -> dict[str, Any]:
    """CompareOptions' fields from what add_alignment_arguments added."""
    from orchlog.compare import LOGITS_NAMES
    from orchlog.compare.pairing.keys import parse_key

    return {
        "key": parse_key(args.key) if args.key else None,
        "maps": args.map,
        "maps_a": args.map_a,
        "maps_b": args.map_b,
        "windows": tuple(args.window),
        "token_offset": args.token_offset,
        "tolerances": args.tolerances,
        "metric": args.metric,
        "threshold": args.threshold,
        "cos_tol": args.cos_tol,
        "logits": tuple(args.logits) if args.logits else LOGITS_NAMES,
    }


def _emit(text: str, output: str | None, color: str | None = "never") -> None:
    if output is None:
        from orchlog.cli.colour import for_stream

        sys.stdout.write(for_stream(text, sys.stdout, color))
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OrchlogError(f"--output {output}: cannot write ({exc.strerror})") from None


def _compare_on_ray(args: argparse.Namespace, opts: CompareOptions) -> CompareReport:
    from orchlog.scale import compare_partitioned
    from orchlog.scale.ray_runner import cluster_cpus, connect, ray_runner, start_workers

    address = args.executor[1]
    connect(address)
    parts = args.parts or cluster_cpus()
    early = start_workers(parts, [args.a, args.b])
    return compare_partitioned(args.a, args.b, opts, ray_runner(address, early), parts)


def _run(args: argparse.Namespace) -> int:
    from orchlog import heap
    from orchlog.read import readahead
    from orchlog.read.writers import LockTable

    heap.keep_freed()  # before the read-ahead's first windows: every batch after them reuses freed memory
    locks = LockTable()  # read while the rest is imported
    if args.executor[0] != "ray":  # on Ray the workers read the traces
        readahead.start([args.a, args.b])  # so are the traces' first windows, on the core the imports leave
    try:
        return _compare(args, locks)
    finally:
        readahead.finish()  # what the readers did not take (the command stopped early) is freed


def _compare(args: argparse.Namespace, locks: LockTable) -> int:
    from orchlog.cli.loading import loading_modules

    with loading_modules():
        from orchlog.compare import LOGITS_NAMES, CompareOptions, compare
        from orchlog.compare.pairing.keys import parse_key
        from orchlog.progress import Progress
        from orchlog.read.paths import open_trace
        from orchlog.report import render

    if args.dump_all and not args.dump_raw:
        raise OrchlogError("--dump-all needs --dump-raw DIR")
    if args.allow_missing and not args.require_all:
        raise OrchlogError("--allow-missing excuses records from --require-all; give --require-all too")
    if args.parts and args.executor[0] != "ray":
        raise OrchlogError("--parts splits the work for --executor ray; give --executor ray[:ADDRESS] too")
    if args.executor[0] == "ray" and (args.per_token or args.dump_raw or args.noise):
        flag = "--per-token" if args.per_token else "--dump-raw" if args.dump_raw else "--noise"
        raise OrchlogError(f"{flag} runs in this process only; leave out --executor")
    if (args.noise_multiple is not None or args.map_noise) and not args.noise:
        raise OrchlogError("--noise-multiple and --map-noise apply to --noise references; give --noise REF2 too")
    if args.per_token:
        unused = [
            flag
            for flag, given in (
                ("--dump-raw", args.dump_raw),
                ("--detail", args.detail),
                ("--threshold", args.threshold is not None),
                ("--metric", args.metric),
                ("--tolerances", args.tolerances is not None),
                ("--window", args.window),
                ("--exact", args.exact),
                ("--require-all", args.require_all),
                ("--noise", args.noise),
            )
            if given
        ]
        if unused:
            raise OrchlogError(f"--per-token grades by --cos-tol alone; {', '.join(unused)} do not apply to it")
        if args.format == "html":
            raise OrchlogError(
                "--format html draws layer charts, which --per-token does not have; use text, json or md"
            )
    a, b = open_trace(args.a), open_trace(args.b)
    _say_still_written(locks, a, b)
    logits = tuple(args.logits) if args.logits else LOGITS_NAMES
    total = (a.size or 0) + (b.size or 0)
    report: CompareReport | PerTokenReport
    with Progress("comparing", total=total or None, quiet=args.quiet, unit="B") as bar:

        def progress(fraction: float) -> None:
            bar.advance(max(0, int(fraction * total) - bar.done))

        try:
            if args.per_token:
                from orchlog.compare.per_token import compare_per_token

                key = parse_key(args.key) if args.key else ("token_idx",)
                report = compare_per_token(
                    a,
                    b,
                    cos_tol=0.999 if args.cos_tol is None else args.cos_tol,
                    key=key,
                    logits=logits,
                    track_token=args.track_token,
                    maps=args.map,
                    maps_a=args.map_a,
                    maps_b=args.map_b,
                    token_offset=args.token_offset,
                    progress=progress,
                )
            else:
                opts = CompareOptions(
                    **alignment_options(args),
                    track_token=args.track_token,
                    top=args.top,
                    detail=args.detail,
                    # The text and Markdown reports list no pairs (but with --detail, which lists them all).
                    max_pairs=args.max_pairs if args.format in LISTS_PAIRS else 0,
                    dump_raw=args.dump_raw,
                    dump_all=args.dump_all,
                    heatmap=args.format == "html",
                    diagnose=args.diagnose,
                    diagnose_worst=args.diagnose_worst,
                    exact=args.exact,
                    require_all=args.require_all,
                    allow_missing=tuple(args.allow_missing),
                    noise=tuple(args.noise),
                    maps_noise=args.map_noise,
                    **({} if args.noise_multiple is None else {"noise_multiple": args.noise_multiple}),
                )
                if args.executor[0] == "ray":
                    report = _compare_on_ray(args, opts)
                else:
                    report = compare(a, b, opts, progress=progress)
        except OSError as exc:
            raise OrchlogError(f"cannot read input: {exc}") from None
    text = render(report, args.format)
    if args.format in ("text", "md"):  # names from the traces never reach a terminal as escape sequences
        text = for_terminal(text)
    _emit(text, args.output, args.color if args.format == "text" else "never")
    return report.exit_code


def _say_still_written(locks: LockTable, *traces: Trace) -> None:
    """One note on stderr for each input file a live process is still writing (it holds the file's lock)."""
    for trace in traces:
        for path, pid in locks.writers(trace.path):
            note = f"{path} is still being written (process {pid} holds its lock): compared is the part written so far"
            print(f"orchlog: note: {for_terminal(note)}", file=sys.stderr)
