"""The page shell: data embedded for the script survives any name, and nothing is fetched."""

from __future__ import annotations

import json
import re

from orchlog.report.page import csv_button, json_script, page


def test_embedded_data_round_trips_and_no_name_can_close_its_block():
    hostile = ["</script><script>alert(1)</script>", "a & b", "<!--", "\u2028 line separator", "]]>"]
    block = json_script("d", {"labels": hostile})
    found = re.fullmatch(r'<script type="application/json" id="d">(.*)</script>', block, re.S)
    assert found is not None, block
    inner = found.group(1)
    assert "<" not in inner and ">" not in inner and "&" not in inner
    assert json.loads(inner) == {"labels": hostile}


def test_a_page_references_nothing_outside_itself():
    html = page("t <x>", ["<p>body</p>", csv_button("pairs", "x.csv")])
    assert html.startswith("<!doctype html>") and "<title>t &lt;x&gt;</title>" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "@import" not in html and "url(" not in html
