"""The guardrail's HTML page: the pairs in a table, and each pair's metrics by position against the bounds."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from orchlog.guardrail import guardrail
from orchlog.report import render_html
from tests.guardrail.trees import write_matrix
from tests.markup import attribute, child_text, search


def _charts(section: str) -> dict[str, ET.Element]:
    return {
        attribute(e, "aria-label"): e for e in (ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", section, re.S))
    }


def test_every_pair_gets_its_metrics_by_position_and_the_first_fail_comes_first(tree):
    result = guardrail(write_matrix(tree, {(1, 2): {"diverge_at": 1}}).root)
    page = render_html(result)
    assert "http" not in page.split("<main>")[1]  # nothing fetched
    sections = re.findall(r'<section class="pair".*?</section>', page, re.S)
    assert len(sections) == len(result.pairs) == 6
    assert 'id="pair-kv_aligned=1 seed=2"' in sections[0] and "FAIL_EQUIV" in sections[0]
    charts = _charts(sections[0])
    assert set(charts) == {"max |a-b| by position", "1 - cosine by position", "KL(a || b) by position"}
    max_abs = charts["max |a-b| by position"]
    (bound,) = [e for e in max_abs.iter("line") if e.find("title") is not None]
    assert child_text(bound, "title").startswith("max_abs_diff 0.005")  # the threshold in force
    polyline = max_abs.find("polyline")
    assert polyline is not None
    points = attribute(polyline, "points").split()
    assert len(points) == len(result.pairs[5].tokens)


def test_the_pairs_table_is_sortable_and_exports_csv(tree):
    page = render_html(guardrail(write_matrix(tree).root))
    table = search(r'<table id="pairs" class="sortable">.*?</table>', page, re.S).group(0)
    assert table.count("<tr>") == 1 + 6 and 'data-table="pairs"' in page
    assert 'class="badge PASS_GUARDRAIL"' in page
