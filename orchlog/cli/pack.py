"""`orchlog pack`: binary streams and JSONL summaries into one Parquet trace, hashes checked."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from orchlog.parquet.settings import CODECS, DEFAULT_CODEC, DEFAULT_LEVEL, DEFAULT_ROW_GROUP_BYTES

if TYPE_CHECKING:
    from orchlog.read.trace import Diagnostic


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "pack",
        help="convert traces (binary streams, JSONL) into one Parquet file, checking every tensor's blake3",
        description="Convert traces into one Parquet file: one row per record, full tensors from binary "
        "streams (JSONL summaries give rows without tensor bytes), each input's rank kept. Every tensor is "
        "hashed and checked against its blake3; mismatches, truncated and damaged inputs are reported with "
        "their file and position, and the rows are written as found. Exit status: 0 clean, 1 problems "
        "reported (output written), 2 error (with --strict, any problem; nothing written).",
        epilog="example:\n  orchlog pack run.rank0.bin run.rank1.bin -o run.parquet\n"
        "  orchlog pack --strict summary.jsonl -o summary.parquet",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("inputs", nargs="+", metavar="IN", help="trace files or directories, in the order to pack")
    p.add_argument("-o", "--output", required=True, metavar="OUT.parquet", help="the Parquet file to write")
    p.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first problem (hash mismatch, truncated input) and write nothing",
    )
    p.add_argument(
        "--codec",
        choices=CODECS,
        default=DEFAULT_CODEC,
        help=f"compression (default {DEFAULT_CODEC}, chosen by measurement: docs/parquet.md)",
    )
    p.add_argument(
        "--level",
        type=int,
        default=None,
        help=f"compression level for zstd and gzip (default {DEFAULT_LEVEL} for zstd)",
    )
    p.add_argument(
        "--row-group-mb",
        type=float,
        default=DEFAULT_ROW_GROUP_BYTES / 2**20,
        metavar="MB",
        help="tensor bytes per row group, the unit a reader reads (default %(default)g)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line and no summary")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from orchlog.cli import EXIT_FOUND, EXIT_OK
    from orchlog.errors import OrchlogError
    from orchlog.parquet.packing import pack
    from orchlog.progress import Progress
    from orchlog.safe_text import for_terminal

    if args.row_group_mb <= 0:
        raise OrchlogError(f"--row-group-mb must be positive, not {args.row_group_mb:g}")
    if args.level is not None and args.codec not in ("zstd", "gzip"):
        raise OrchlogError(f"--level applies to zstd and gzip, not {args.codec}")
    level = args.level if args.level is not None else (DEFAULT_LEVEL if args.codec == DEFAULT_CODEC else None)
    with Progress("packing", quiet=args.quiet, unit="records") as progress:

        def on_problem(diag: Diagnostic) -> None:
            progress.close()
            print(f"orchlog pack: {for_terminal(str(diag))}", file=sys.stderr)

        result = pack(
            args.inputs,
            args.output,
            strict=args.strict,
            codec=args.codec,
            level=level,
            row_group_bytes=int(args.row_group_mb * 2**20),
            on_problem=on_problem,
            on_records=progress.advance,
        )
    if not args.quiet:
        print(for_terminal(str(result)))
    return EXIT_OK if result else EXIT_FOUND
