"""Checkpoint, team and path names from the traces cannot inject into Markdown reports or the terminal."""

from __future__ import annotations

import numpy as np

from orchlog.cli import main
from orchlog.compare import CompareOptions, compare
from orchlog.read.paths import open_trace
from orchlog.report import render_markdown
from tests.tracegen import header, record, write_jsonl

NAME = "attn|<img src=x onerror=alert(1)>`x`\x1b]0;pwned\x07"


def _traces(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [record(NAME, np.ones(8, np.float32), token_idx=0, seq=0)], header())
    b = write_jsonl(
        tmp_path / "b.jsonl", [record(NAME, np.full(8, 2, np.float32), token_idx=0, seq=0)], header(team="t|<b>")
    )
    return a, b


def test_the_markdown_report_escapes_every_name_it_shows(tmp_path):
    a, b = _traces(tmp_path)
    md = render_markdown(compare(open_trace(a), open_trace(b), CompareOptions(detail=True)))
    assert "<img" not in md and "<b>" not in md and "\x1b" not in md
    table_rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert all(
        line.replace("\\|", "").count("|") == table_rows[0].replace("\\|", "").count("|") for line in table_rows[:3]
    )


def test_text_and_markdown_reports_reach_the_terminal_without_escape_sequences(tmp_path, capsys):
    a, b = _traces(tmp_path)
    for fmt in ("text", "md"):
        assert main(["compare", str(a), str(b), "--format", fmt, "--quiet"]) == 1
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out, repr(out[out.find("\x1b") - 300 :][:400])
        assert "\\x1b" in out
    assert main(["show", str(a)]) == 0
    assert "\x1b" not in capsys.readouterr().out
