"""The compare page in headless Chromium: no script errors, the key parts drawn and on screen, at two sizes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks.compare_traces import write_jsonl_pair
from orchlog.compare import CompareOptions, compare
from orchlog.report import render_html
from tests.browser import needs_chromium, png_size, render
from tests.report.pages import write_runs

pytestmark = [pytest.mark.slow, needs_chromium]

SIZES = [(1280, 800), (700, 1000)]  # a laptop window, and a narrow one (half a screen, a phone on its side)
# The failing pairs are drawn as a table that scrolls sideways inside its frame (div.scroll) when narrow.
PARTS = ["#heatmap", ".heat-mark", "#first", "#stages", "#histogram", "#by-index", "#by-head", "div.scroll"]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_compare_page_renders_without_errors_with_every_part_visible(tmp_path, size):
    a, b = write_runs(tmp_path)
    page = tmp_path / "report.html"
    page.write_text(render_html(compare(a, b, CompareOptions(heatmap=True))), encoding="utf-8")
    shot = tmp_path / f"report_{size[0]}x{size[1]}.png"
    seen = render(page, size, PARTS, shot)
    assert seen["errors"] == []
    assert png_size(shot) == size
    assert seen["scroll_width"] <= seen["width"], "the page is wider than the window"
    for part in PARTS:
        box = seen["elements"][part]
        assert box is not None and box["shown"] and box["width"] > 0 and box["height"] > 0, part
        assert box["right"] <= seen["width"] + 1, f"{part} runs past the window's right edge"
    assert seen["elements"]["#heatmap"]["drawn"]  # the script drew the canvas
    mark = seen["elements"][".heat-mark"]
    assert 0 <= mark["top"] and mark["bottom"] <= seen["height"], "the first divergence is not on the first screen"


def test_a_two_million_record_page_shows_the_diverging_region_without_scrolling(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl_pair(a, b, 2_000_000, layers=24)
    page = tmp_path / "report.html"
    cmd = [sys.executable, "-m", "orchlog", "compare", str(a), str(b), "-q", "--format", "html", "-o", str(page)]
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 1
    a.unlink()
    b.unlink()
    for size in [(1280, 800), (1024, 768)]:
        seen = render(page, size, ["#heatmap", ".heat-mark", "#heatmap-near"], tmp_path / f"big_{size[0]}.png")
        assert seen["errors"] == []
        for part in ("#heatmap", ".heat-mark"):
            box = seen["elements"][part]
            assert box is not None and box["width"] > 0, part
            assert 0 <= box["top"] and box["bottom"] <= seen["height"] and box["right"] <= seen["width"], part
        assert seen["elements"]["#heatmap-near"] is not None  # the close-up follows, one column a token
