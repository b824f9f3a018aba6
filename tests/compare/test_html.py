"""The HTML report: one self-contained page whose charts show where the error starts and grows."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.compare.html import heat_grid
from tests.compare.runs import from_layer, run
from tests.tracegen import record, write_jsonl


def _report(tmp_path, bug=from_layer(1, 1, "Qcur"), tokens=3, **opts):
    a = write_jsonl(tmp_path / "a.jsonl", run(tokens=tokens))
    b = write_jsonl(tmp_path / "b.jsonl", run(tokens=tokens, bug=bug))
    return compare(a, b, CompareOptions(heatmap=True, **opts))


def _svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", page, re.S)]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.external = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("#"):
                self.external.append((tag, value))


def test_page_is_self_contained_with_well_formed_charts(tmp_path):
    page = _report(tmp_path).to_html()
    parser = _Tags()
    parser.feed(page)
    assert parser.external == []
    charts = _svgs(page)
    assert len(charts) == 3  # tier strip, error by layer, heatmap
    assert page.startswith("<!doctype html>") and "diverged" in page


def test_heatmap_has_one_cell_per_token_and_layer_and_outlines_the_first_divergence(tmp_path):
    r = _report(tmp_path)
    labels, columns, grid, _ = heat_grid(r.findings.heat)
    assert columns == ["0", "1", "2"]
    assert labels == ["embedding", "layer 0", "layer 1", "layer 2", "logits"]
    heat = _svgs(r.to_html())[-1]
    cells = [e for e in heat.iter("rect") if e.get("class") == "cell"]
    assert len(cells) == len(labels) * len(columns)
    # Token 0 is clean everywhere; token 1 fails from layer 1 on.
    assert grid[labels.index("layer 1")][0] == 0.0 and grid[labels.index("layer 1")][1] > 0.4
    (mark,) = [e for e in heat.iter("rect") if e.get("class") == "mark"]
    row, col = labels.index("layer 1"), 1
    expected = cells[row * len(columns) + col]  # cells are drawn row by row
    assert (mark.get("x"), mark.get("y")) == (expected.get("x"), expected.get("y"))


def test_error_by_layer_chart_has_a_bar_per_layer_at_the_diverging_token(tmp_path):
    r = _report(tmp_path)
    bars = [e for e in _svgs(r.to_html())[1].iter("rect") if e.get("class") == "bar"]
    assert len(bars) == len(r.growth)
    widths = [float(b.get("width")) for b in bars]
    labels = [g.label for g in r.growth]
    assert widths[labels.index("layer 1")] > widths[labels.index("layer 0")]


def test_many_tokens_are_grouped_into_columns_showing_their_worst(tmp_path):
    r = _report(tmp_path, tokens=7, bug=from_layer(5, 0, "attn_norm"))
    labels, columns, grid, groups = heat_grid(r.findings.heat, max_columns=3)
    assert groups == [[0, 1, 2], [3, 4, 5], [6]] and columns == ["0-2", "3-5", "6"]
    assert grid[labels.index("layer 0")][0] == 0.0 and grid[labels.index("layer 0")][1] > 0.4


def test_names_are_escaped(tmp_path):
    evil = '<script>alert("x")</script>'
    a = write_jsonl(tmp_path / "a.jsonl", [record(evil, np.ones(4, np.float32), token_idx=0, seq=0)])
    b = write_jsonl(tmp_path / "b.jsonl", [record(evil, np.full(4, 9, np.float32), token_idx=0, seq=0)])
    page = compare(a, b, CompareOptions(heatmap=True)).to_html()
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_identical_traces_give_an_ok_page_without_a_divergence_section(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", run())
    page = compare(a, a, CompareOptions(heatmap=True)).to_html()
    assert 'class="badge ok"' in page and "First divergence" not in page


def test_cli_writes_the_page_and_exits_1_on_divergence(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", run())
    b = write_jsonl(tmp_path / "b.jsonl", run(bug=from_layer(1, 1, "Qcur")))
    out = tmp_path / "report.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchlog",
            "compare",
            str(a),
            str(b),
            "--format",
            "html",
            "--output",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert "<h2>Error by token and layer</h2>" in out.read_text()
    per_token = subprocess.run(
        [sys.executable, "-m", "orchlog", "compare", str(a), str(b), "--per-token", "--format", "html"],
        capture_output=True,
        text=True,
    )
    assert per_token.returncode == 2 and "Traceback" not in per_token.stderr
