"""The HTML report: one self-contained page whose charts show where the error starts and grows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.report import render_html
from tests.compare.runs import from_layer, run
from tests.markup import attribute, child_text, search
from tests.report.pages import write_runs
from tests.tracegen import emit, record, write_jsonl


def _report(tmp_path, bug=from_layer(1, 1, "Qcur"), tokens=3, **opts):
    a = write_jsonl(tmp_path / "a.jsonl", run(tokens=tokens))
    b = write_jsonl(tmp_path / "b.jsonl", run(tokens=tokens, bug=bug))
    return compare(a, b, CompareOptions(heatmap=True, **opts))


def _full_report(tmp_path, **kw):
    a, b = write_runs(tmp_path, **kw)
    return compare(a, b, CompareOptions(heatmap=True))


def _svgs(page: str) -> dict[str, ET.Element]:
    return {attribute(e, "aria-label"): e for e in (ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", page, re.S))}


def _data(page: str, element_id: str) -> dict:
    return json.loads(search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', page).group(1))


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.external = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("#"):
                self.external.append((tag, value))


def test_page_is_self_contained_and_scales_with_the_window(tmp_path):
    page = render_html(_report(tmp_path))
    parser = _Tags()
    parser.feed(page)
    assert parser.external == []
    assert page.startswith("<!doctype html>") and 'name="viewport"' in page
    for chart in _svgs(page).values():  # no fixed pixel width: each chart shrinks with its container
        assert chart.get("width") is None and chart.get("class") == "chart"


def test_heatmap_data_has_one_cell_per_token_and_layer_and_marks_the_first_divergence(tmp_path):
    heat = _data(render_html(_report(tmp_path)), "heat-all")
    assert heat["labels"] == ["embedding", "layer 0", "layer 1", "layer 2", "logits"]
    assert heat["first"] == heat["last"] == [0, 1, 2]
    severity = np.array(heat["sev"], dtype=float).reshape(5, 3)
    # Token 0 is clean everywhere; token 1 fails from layer 1 on: beyond the threshold (severity above 1).
    assert severity[2, 0] == 0 and severity[2, 1] > 1 and severity[1, 1] < 1
    assert heat["mark"] == [2, 1]


def test_the_heading_names_the_token_once_and_the_verdict_says_fail_once(tmp_path):
    page = render_html(_report(tmp_path))
    heading = search(r'<h2 id="first">(.*?)</h2>', page).group(1)
    assert heading.count("token 1") == 1
    assert "fail: fail:" not in page and "fail</span>fail" not in page


def test_prefill_and_decode_are_told_apart_and_a_close_up_follows_many_tokens(tmp_path):
    r = _full_report(tmp_path, tokens=12, prompt=8)
    heat = _data(render_html(r), "heat-all")
    assert heat["decode"] == 8  # token 8 is the first decode step; one column per token here
    assert "heat-near" not in render_html(r)  # twelve tokens fit one column each: no close-up needed
    from orchlog.report.heatmap import heat_grid

    grouped = heat_grid(r.findings.heat, max_columns=5)
    assert grouped.group == 3 and grouped.first_token == [0, 3, 6, 9] and grouped.last_token == [2, 5, 8, 11]


def test_the_diverging_layer_gets_a_per_stage_chart(tmp_path):
    page = render_html(_full_report(tmp_path))
    stages = _svgs(page)["max_abs by stage in layer 2 (execution order)"]
    labels = [t.text for t in stages.iter("text") if t.get("text-anchor") == "end"]
    assert labels == ["attn_norm", "Qcur", "Kcur", "attn_out", "ffn_out", "l_out"]
    bars = {child_text(e, "title").split(":")[0]: float(attribute(e, "width")) for e in stages.iter("rect")}
    assert bars["attn_norm"] <= 1 and bars["Qcur"] > 100  # the error enters at Qcur


def test_a_rope_error_shows_in_the_per_head_grid_along_its_rotated_pair(tmp_path):
    page = render_html(_full_report(tmp_path))
    charts = _svgs(page)
    assert "histogram of |a-b|" in charts and "worst |a-b| by index" in charts
    grid = charts["worst |a-b| per head"]
    hot = {
        tuple(int(x) for x in re.findall(r"\d+", child_text(rect, "title").split(":")[0]))
        for rect in grid.iter("rect")
        if float(child_text(rect, "title").split(": ")[1]) > 0
    }
    # The wrong rotation touches dimensions 3 and 3 + 16/2 of every head, and nothing else.
    assert hot == {(h, d) for h in range(4) for d in (3, 11)}


def test_summaries_say_why_the_error_is_not_drawn(tmp_path):
    page = render_html(_report(tmp_path))
    assert "Not drawn: the traces hold only leading values" in page


def test_failing_pairs_are_a_sortable_table_with_csv_export(tmp_path):
    r = _report(tmp_path)
    page = render_html(r)
    table = search(r'<table id="pairs" class="sortable">.*?</table>', page, re.S).group(0)
    rows = re.findall(r"<tr>", table)
    assert len(rows) == 1 + r.findings.failed + r.findings.undecided  # the header and every failing pair
    assert 'data-table="pairs"' in page and "Save as CSV" in page
    capped = render_html(_report(tmp_path, max_pairs=3))
    assert f"the first 3 of {r.findings.failed} in execution order" in capped


def test_unmatched_lists_say_how_many_they_leave_out(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [record(f"x{i}", np.ones(2, np.float32), token_idx=i) for i in range(230)])
    b = write_jsonl(tmp_path / "b.jsonl", [record("x0", np.ones(2, np.float32), token_idx=0)])
    page = render_html(compare(a, b, CompareOptions(heatmap=True)))
    assert "<h2>Only in a (229)</h2>" in page and "... and 29 more (all of them in --format json)" in page


def test_names_are_escaped_even_inside_the_embedded_data(tmp_path):
    evil = '</script><script>alert("x")</script>'
    a = write_jsonl(tmp_path / "a.jsonl", [record(evil, np.ones(4, np.float32), token_idx=0, seq=0)])
    b = write_jsonl(tmp_path / "b.jsonl", [record(evil, np.full(4, 9, np.float32), token_idx=0, seq=0)])
    page = render_html(compare(a, b, CompareOptions(heatmap=True)))
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert _data(page, "heat-all")["labels"] == [evil]


def test_identical_traces_give_an_ok_page_without_a_divergence_section(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", run())
    page = render_html(compare(a, a, CompareOptions(heatmap=True)))
    assert 'class="badge ok"' in page and "First divergence" not in page


def test_cli_writes_the_page_and_exits_1_on_divergence(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", run())
    b = write_jsonl(tmp_path / "b.jsonl", run(bug=from_layer(1, 1, "Qcur")))
    out = tmp_path / "report.html"
    cmd = [sys.executable, "-m", "orchlog", "compare", str(a), str(b), "--format", "html", "-o", str(out), "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "<h2>Error by token and layer</h2>" in out.read_text()
    per_token = subprocess.run(
        [sys.executable, "-m", "orchlog", "compare", str(a), str(b), "--per-token", "--format", "html"],
        capture_output=True,
        text=True,
    )
    assert per_token.returncode == 2 and "Traceback" not in per_token.stderr


def test_the_heatmap_keeps_every_token_after_the_divergence_is_known(tmp_path):
    # Enough records for many rounds: the rounds after the first failing logits still reach the heatmap.
    a = emit(tmp_path / "a.jsonl", run(tokens=2000))
    b = emit(tmp_path / "b.jsonl", run(tokens=2000, bug=from_layer(1, 1, "Qcur")))
    r = compare(a, b, CompareOptions(heatmap=True))
    heat = _data(render_html(r), "heat-all")
    assert heat["first"][0] == 0 and heat["last"][-1] == 1999
    assert r.diverging_token == 1
