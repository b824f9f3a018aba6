"""What the example programs' command lines share: the parser, the model and output arguments, the
options several take (bugs, seed, a working directory, the report's format), and the one line an error
prints instead of a traceback."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from examples.numpy_engine.bugs import ALL_BUGS, Bug
from examples.qwen2_tiny.weights import DEFAULT_SEED
from orchlog.report import render_markdown

MODEL = "tiny Qwen2 GGUF (examples.qwen2_tiny.make_model)"
LOGITS = "logits as .npy, (n_positions, n_vocab) float32"
KEEP = "keep the model and traces in this directory"


def parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """`python -m module --help` prints `doc` as written (its examples keep their lines)."""
    return argparse.ArgumentParser(
        prog=f"python -m {module}", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def model_and_out(parser: argparse.ArgumentParser, out: str) -> argparse.ArgumentParser:
    """The positional arguments `model` (a tiny Qwen2 GGUF) and `out` (what the program writes)."""
    parser.add_argument("model", type=Path, help=MODEL)
    parser.add_argument("out", type=Path, help=out)
    return parser


def _bugs(names: str) -> Bug:
    try:
        return Bug.parse(names)
    except ValueError as exc:  # argparse prints it as a usage error (exit 2)
        raise argparse.ArgumentTypeError(str(exc)) from None


def bugs_option(parser: argparse.ArgumentParser, flag: str = "--bug") -> None:
    """The NumPy engine's bugs, comma-separated, parsed into one Bug (NONE by default)."""
    known = ", ".join(str(b.name).lower() for b in ALL_BUGS)
    parser.add_argument(flag, type=_bugs, default=Bug.NONE, help=f"NumPy engine bugs, comma-separated, from: {known}")


def seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"weights seed (default {DEFAULT_SEED})")


def report_options(parser: argparse.ArgumentParser, keep: str = KEEP) -> None:
    """--out (a directory kept after the run, see `directory`) and --format (text or md)."""
    parser.add_argument("--out", type=Path, help=keep)
    parser.add_argument("--format", choices=("text", "md"), default="text")


@contextmanager
def directory(kept: Path | None) -> Iterator[Path]:
    """`kept` (made if missing), or a temporary directory removed on leaving."""
    with tempfile.TemporaryDirectory() as tmp:
        path = kept or Path(tmp)
        path.mkdir(parents=True, exist_ok=True)
        yield path


def show(report: object, form: str) -> None:
    """A compare or graft report: its text (the report itself), or Markdown with `form` md. Piped into
    `head` and the like, the rest of the output goes nowhere instead of ending in a traceback."""
    try:
        print(render_markdown(report) if form == "md" else report, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def same_comparison(command: str, kept: bool) -> str:
    """The line that ends a report: the `orchlog compare` command that reproduces it."""
    return f"the same comparison: {command}" + ("" if kept else "  (traces kept with --out DIR)")


def error(program: str, exc: BaseException | str) -> int:
    """One line on stderr, `program: error: ...`; the exit code 2."""
    print(f"{program}: error: {exc}", file=sys.stderr)
    return 2
