"""Findings: known kinds only, JSON with plain numbers, ranking."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchlog.diagnose.finding import Finding, ranked


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown signature kind"):
        Finding("wobble", 1.0, {}, "")


def test_json_rounds_numbers_and_spells_non_finite_ones():
    f = Finding("scale", 0.123456789, {"factor": np.float64(1 / 3), "bad": math.inf, "list": [math.nan, 2]}, "m")
    doc = f.to_json()
    assert doc == {
        "kind": "scale",
        "confidence": 0.1235,
        "evidence": {"factor": 0.333333, "bad": "Infinity", "list": ["NaN", 2]},
        "message": "m",
    }


def test_ties_keep_the_catalogue_order():
    a, b = Finding("precision", 0.9, {}, ""), Finding("offset", 0.9, {}, "")
    assert ranked([a, b]) == [b, a]
