"""The compare page's "Save as CSV", clicked in headless Chromium: the file it saves holds no cell a spreadsheet
would run as a formula (a name starting with =, +, -, @, a tab or a line break is written as text, after an
apostrophe), and its numbers stay numbers. (An HTML page holds a carriage return as a line feed.)"""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.report import render_html
from tests.browser import download, needs_chromium
from tests.tracegen import record, write_jsonl

pytestmark = needs_chromium

HOSTILE = ['=HYPERLINK("http://example.com","open")', "+SUM(A1:A9)", "-2+3", "@cmd", "\tTAB", "\rCR", "plain"]


def _page(tmp_path):
    rng = np.random.default_rng(3)
    a, b = [], []
    for seq, name in enumerate(HOSTILE):
        x = rng.standard_normal(8).astype(np.float32)
        a.append(record(name, x, token_idx=0, layer=seq, seq=seq, stage="=1+1"))
        b.append(record(name, x + 0.5, token_idx=0, layer=seq, seq=seq, stage="=1+1"))
    report = compare(write_jsonl(tmp_path / "a.jsonl", a), write_jsonl(tmp_path / "b.jsonl", b), CompareOptions())
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    return page


def test_saved_csv_neutralises_formula_prefixes_and_keeps_numbers_numeric(tmp_path):
    files = download(_page(tmp_path), "button.csv", tmp_path)
    # QUOTE_NONNUMERIC: an unquoted field must read as a number (the reader raises otherwise); quoted are text.
    text = files["orchlog-pairs.csv"].decode("utf-8")
    # cells are str or float (typeshed says str only)
    rows: list[list[Any]] = list(csv.reader(io.StringIO(text, newline=""), quoting=csv.QUOTE_NONNUMERIC))
    head, body = rows[0], rows[1:]
    assert len(body) == len(HOSTILE)
    checkpoint, stage, value = head.index("checkpoint"), head.index("stage"), head.index("value")
    shown = [n.replace("\r", "\n") for n in HOSTILE]
    assert sorted(r[checkpoint] for r in body) == sorted(("'" + n if n[0] in "=+-@\t\n" else n) for n in shown)
    assert {r[stage] for r in body} == {"'=1+1"}
    assert all(isinstance(r[value], float) and r[value] > 0 for r in body)  # numbers stay numbers
    texts = [cell for row in rows for cell in row if isinstance(cell, str)]
    assert not [t for t in texts if t[:1] in ("=", "+", "-", "@", "\t", "\r", "\n")]
