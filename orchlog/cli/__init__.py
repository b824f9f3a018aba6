"""The `orchlog` command: a thin layer of subcommands over the library.

Each subcommand lives in its own module with `register(subparsers)` that
adds its parser and sets `func`; the function returns the exit code.
Exit codes: 0 success, 1 the check found a problem (divergence, stale
files, invalid trace), 2 an error (bad arguments, unreadable input).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from typing import NoReturn

# The command's arithmetic runs in orchlog's kernels and in elementwise NumPy, never in BLAS; the
# threads OpenBLAS starts with NumPy only spun on the cores the readers and kernels need (4.6% of
# a full-mode compare's CPU samples). A user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from orchlog import bus_error
from orchlog.cli import colour
from orchlog.errors import OrchlogError
from orchlog.safe_text import for_terminal

# Subcommand modules, in the order `orchlog --help` lists them.
COMMANDS = [
    "trace",
    "compare",
    "calibrate",
    "graft-report",
    "weights",
    "show",
    "validate",
    "pack",
    "guardrail",
    "codegen",
    "completion",
]

EXIT_OK, EXIT_FOUND, EXIT_ERROR = 0, 1, 2


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size finds it (COLUMNS, else stdout's terminal, else 80)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line that says what to do."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # With its width given, a formatter does not import shutil to learn it (with bz2, lzma and fnmatch:
        # 4 ms of every command's start-up, as every add_argument makes a formatter).
        # Every argparse formatter takes `width`; typeshed's protocol for formatter_class names only `prog`.
        return self.formatter_class(prog=self.prog, width=_columns() - 2)  # type: ignore[call-arg]


class _Version(argparse.Action):
    """--version: the version is looked up (in the generated tables) only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from orchlog.schema_gen import LIBRARY_VERSION

        sys.stdout.write(f"orchlog {LIBRARY_VERSION}\n")
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or only of `command` (what `orchlog COMMAND ...` needs: a command's
    module imports only what its own options need, but not importing the others is faster still)."""
    parser = _Parser(
        prog="orchlog",
        description="Find where two implementations of the same model stop agreeing.",
        epilog="example:\n  orchlog compare reference.jsonl ours.jsonl\n\n"
        "Run `orchlog COMMAND --help` for each command's options and an example.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action=_Version)
    colour.add_option(parser)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for name in [command] if command in COMMANDS else COMMANDS:
        importlib.import_module(f"orchlog.cli.{name.replace('-', '_')}").register(sub)
    for each in sub.choices.values():  # `orchlog compare --color never ...` as well as `orchlog --color never ...`
        colour.add_option(each, default=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    parser = build_parser(given[0] if given else None)
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return int(args.func(args))
    except OrchlogError as exc:
        print(f"{colour.error_prefix(sys.stderr, args.color)} {for_terminal(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("orchlog: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("ORCHLOG_DEBUG"):
            raise
        print(
            f"{colour.error_prefix(sys.stderr, args.color, 'internal error')} {type(exc).__name__}: {for_terminal(str(exc))} "
            "(set ORCHLOG_DEBUG=1 for a traceback and report it)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def run() -> NoReturn:
    """The `orchlog` process (the console script, `python -m orchlog`): `main()`, then exit.

    Every object still alive is frozen first, so that the interpreter's last garbage collection on its
    way out does not walk the ~75,000 objects NumPy's and orchlog's modules made: a process's
    tear-down went from 29 to 14 ms (benchmarks/compare_speed.py rows, docs/compare.md). atexit
    handlers still run and standard streams are still flushed; only cyclic garbage left at exit goes
    unfinalized, as the interpreter never promised otherwise. Callers of `main()` in a long-lived
    process (tests, notebooks) keep their collector as it was, and their signals: only this process
    answers a file cut shorter under a mapping with one line and exit 2 (`bus_error`)."""
    bus_error.exit_with()
    try:
        code = main()
    finally:  # --help and --version leave through SystemExit
        gc.freeze()
    sys.exit(code)
