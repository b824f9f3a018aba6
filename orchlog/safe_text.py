"""Names from traces, made safe to show: on a terminal and in Markdown.

Checkpoint, team, stage and file names come from the traces, which anyone
can write. Printed raw, `\\x1b]0;...` retitles the terminal and `\\x1b[2J`
clears it, a `|` splits a Markdown table cell, and `<img onerror=...>`
reaches whatever renders the Markdown. Every report and listing goes
through these three functions (HTML reports use html.escape):

    for_terminal(text)     control characters shown as \\xNN (newlines and tabs kept)
    markdown_text(text)    text in a Markdown paragraph, list item or table cell
    markdown_code(text)    text as an inline code span, safe in a table cell
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and
# isolates that make text display in another order than it reads ("Trojan Source").
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What makes emphasis, code, links, table cells and headings; `_` only where it can open or close
# emphasis (not inside a word: `attn_norm` stays as it is written).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]|~#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def _escape_control(m: re.Match[str]) -> str:
    c = m.group()
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def for_terminal(text: str) -> str:
    """Control and bidi characters as visible escapes; everything else, newlines and tabs included, as is."""
    return _CONTROL.sub(_escape_control, text)


def _one_line(text: str) -> str:
    return for_terminal(text.replace("\r\n", " ").replace("\n", " ").replace("\t", " "))


def markdown_text(text: str) -> str:
    """Text that renders as itself in Markdown, on one line: HTML, emphasis, links and cell breaks escaped."""
    text = _one_line(str(text))
    text = "".join(_HTML.get(c, c) for c in text)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def markdown_code(text: str) -> str:
    """Text as an inline code span: fenced by more backticks than it holds, `|` escaped for tables.

    Inside a code span nothing is HTML and no emphasis applies; a table still splits on an
    unescaped `|`, which GitHub's tables let `\\|` escape even there."""
    text = _one_line(str(text)).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
