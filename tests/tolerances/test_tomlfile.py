"""TOML written by orchlog (calibrated tolerance files) reads back as the same document."""

from __future__ import annotations

import math

from orchlog.tolerances.tomlfile import dump_toml, load_toml


def test_a_document_of_tables_arrays_and_odd_strings_reads_back_the_same():
    doc = {
        "description": 'quotes " and \\ backslashes, é, a tab\t and a newline\n',
        "calibration": {"pairs": [["a b.bin", "c.bin"]], "headroom": 1.5, "exact": True},
        "default": {"metric": "rel_l2", "threshold": 0.0705},
        "rule": [
            {"name": "x*", "match": ["x[*]"], "layers": [0.1, 2e-07], "observed": {"rel_l2": 1e300, "pairs": 3}},
            {"name": "kq (view)", "match": ["kq"], "stage": ""},
        ],
    }
    text = dump_toml(doc, comments=["a comment", "another"])
    assert text.startswith("# a comment\n# another\n")
    assert load_toml(text.encode(), "t") == doc


def test_infinities_are_written_as_toml_writes_them():
    back = load_toml(dump_toml({"x": math.inf, "y": -math.inf}).encode(), "t")
    assert back == {"x": math.inf, "y": -math.inf}
