"""The guardrail page in headless Chromium: no script errors, the table and every pair's charts visible."""

from __future__ import annotations

import pytest

from orchlog.guardrail import guardrail
from orchlog.report import render_html
from tests.browser import needs_chromium, png_size, render
from tests.guardrail.trees import write_matrix

pytestmark = [pytest.mark.slow, needs_chromium]


@pytest.mark.parametrize("size", [(1280, 800), (700, 1000)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_guardrail_page_renders_without_errors_at_two_sizes(tree, tmp_path, size):
    result = guardrail(write_matrix(tree, {(1, 2): {"diverge_at": 1}}).root)
    page = tmp_path / "guardrail.html"
    page.write_text(render_html(result), encoding="utf-8")
    shot = tmp_path / "guardrail.png"
    parts = ["h1 .badge", "#pairs", "section.pair svg", "button.csv"]
    seen = render(page, size, parts, shot)
    assert seen["errors"] == [] and png_size(shot) == size
    assert seen["scroll_width"] <= seen["width"], "the page is wider than the window"
    for part in parts:
        box = seen["elements"][part]
        assert box is not None and box["shown"] and box["width"] > 0, part
    assert seen["elements"]["h1 .badge"]["bottom"] <= seen["height"]
