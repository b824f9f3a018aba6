"""Colour on terminals: verdicts, failures and warnings stand out in the text reports and error lines.

`--color auto` (the default) colours only a terminal, and never when NO_COLOR
is set to anything but the empty string (https://no-color.org) or TERM is
`dumb`; `--color always` colours even a pipe or a file (for `less -R`, CI
logs that render ANSI), whatever NO_COLOR says, since it is asked for by
name; `--color never` never colours. The codes come from termcolor, imported
only when colour is on, so start-up stays as it was.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
from collections.abc import Callable
from typing import IO, Any

CHOICES = ("auto", "always", "never")

# (pattern, colour, bold): the first match of a line decides its colour; the whole line is painted.
_LINES = (
    (r"RESULT: ok\b|VERDICT: (PASS_GUARDRAIL|EXPECTED_DRIFT_ONLY)\b", "green", True),
    (r"RESULT: undecided\b|VERDICT: (PASS_GUARDRAIL_LOCAL|INCOMPLETE)\b", "magenta", True),
    (r"RESULT: |VERDICT: |FIRST DIVERGENCE:|FIRST FAIL:|TOKEN IDS: ", "red", True),
    (r"WARNING: ", "yellow", False),
    (r"[A-Z][A-Z0-9 ()-]+:( |$)", None, True),  # section headings: COVERAGE:, RESULTS:, UNMATCHED (...): 12
    (r"\s+(fail|FAIL)\b[ :]", "red", False),  # a tier row with failures, a verdict line, a growth row
    (r"\s+undecided\b[ :]", "magenta", False),
)
# Words painted wherever they stand (the guardrail's table of pairs, the tier of a growth row).
_WORDS = (
    (r"\b(FAIL_EQUIV|PAIRING_ERROR|FAIL)\b", "red"),
    (r"\b(PASS_EQUIV|EXPECTED_DRIFT)\b", "green"),
)
_ZERO_COUNT = r"\s+(fail|undecided)\s+0$"  # "  fail        0": nothing to flag


@functools.cache
def _compiled() -> tuple[
    re.Pattern[str], list[tuple[re.Pattern[str], str | None, bool]], list[tuple[re.Pattern[str], str]]
]:
    """The patterns, compiled the first time a report is painted: most runs are piped, and never are."""
    return (
        re.compile(_ZERO_COUNT),
        [(re.compile(p), c, b) for p, c, b in _LINES],
        [(re.compile(p), c) for p, c in _WORDS],
    )


def add_option(parser: argparse.ArgumentParser, default: Any = "auto") -> None:
    parser.add_argument(
        "--color",
        choices=CHOICES,
        default=default,
        help="colour the output: auto (a terminal, unless NO_COLOR is set), always or never (default auto)",
    )


def wanted(stream: IO[str], choice: str | None) -> bool:
    """Whether to colour what goes to `stream`, under `--color choice`."""
    if choice == "never":
        return False
    if choice == "always":
        return True
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def paint(text: str) -> str:
    """The report with ANSI colours (unconditionally: ask `wanted` first)."""
    from termcolor import colored

    zero_count, line_rules, word_rules = _compiled()
    out = []
    for line in text.split("\n"):
        if zero_count.match(line):
            out.append(line)
            continue
        rule = next(((c, b) for rx, c, b in line_rules if rx.match(line)), None)
        if rule is not None:
            colour, bold = rule
            out.append(colored(line, colour, attrs=["bold"] if bold else None, force_color=True) if line else line)
            continue
        for rx, colour in word_rules:
            line = rx.sub(_painter(colour), line)
        out.append(line)
    return "\n".join(out)


def _painter(colour: str) -> Callable[[re.Match[str]], str]:
    from termcolor import colored

    return lambda m: colored(m.group(0), colour, force_color=True)


def for_stream(text: str, stream: IO[str], choice: str | None) -> str:
    return paint(text) if wanted(stream, choice) else text


def error_prefix(stream: IO[str], choice: str | None, word: str = "error") -> str:
    """`orchlog: error:`, in red on a terminal."""
    prefix = f"orchlog: {word}:"
    if not wanted(stream, choice):
        return prefix
    from termcolor import colored

    return colored(prefix, "red", attrs=["bold"], force_color=True)
