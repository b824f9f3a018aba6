"""Grading: tiers from the rule's bounds, failure from its threshold, cos_tol, sizes and NaN mismatches."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.compare.grading import TIER_NAMES, grade
from orchlog.compare.metrics import measure
from orchlog.compare.tolerances import load_tolerances
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord


def _grades(pairs, tol=None, name="blk.attn_norm"):
    a = RecordBatch.from_records([TraceRecord(name, dtype="f64", numel=len(x), values=np.array(x)) for x, _ in pairs])
    b = RecordBatch.from_records([TraceRecord(name, dtype="f64", numel=len(y), values=np.array(y)) for _, y in pairs])
    idx = np.arange(len(pairs))
    t = measure(a, b, idx, idx, lambda _: False)
    g = grade(t, tol or load_tolerances())
    return [TIER_NAMES[i] for i in g.tier], g


@pytest.mark.parametrize(
    "diff, tier",
    [
        (0.0, "exact"),
        (5e-6, "exact"),
        (1e-5, "close"),
        (5e-4, "close"),
        (5e-3, "acceptable"),
        (1e-2, "fail"),
        (0.5, "fail"),
    ],
)
def test_tiers_follow_the_seed_ladder_and_the_intermediate_threshold(diff, tier):
    tiers, _ = _grades([([1.0, 0.0], [1.0, diff])])
    assert tiers == [tier]


def test_a_looser_rule_turns_beyond_the_ladder_into_warning_not_fail():
    tiers, g = _grades([([0.0], [3.0]), ([0.0], [0.05])], load_tolerances().overridden(threshold=5.0))
    assert tiers == ["warning", "acceptable"]
    assert g.severity.tolist() == pytest.approx([0.6, 0.01])


def test_cos_tol_fails_pairs_whose_direction_is_off_even_when_max_abs_is_small():
    small = [1e-3, 0.0]
    tiers, g = _grades([(small, [0.0, 1e-3])], load_tolerances().overridden(cos_tol=0.999))
    assert tiers == ["fail"] and g.reason[0] == "cosine < 0.999"


def test_sizes_that_differ_and_nan_where_the_other_side_is_finite_fail():
    tiers, g = _grades([([1.0, 2.0], [1.0]), ([np.nan, 1.0], [0.0, 1.0]), ([np.nan], [np.nan])])
    assert tiers == ["fail", "fail", "exact"]
    assert g.reason[0] == "sizes differ" and "NaN/Inf" in g.reason[1]


def test_a_higher_is_better_metric_fails_below_its_threshold():
    tol = load_tolerances().overridden(metric="cosine", threshold=0.99)
    tiers, g = _grades([([1.0, 0.0], [1.0, 0.01]), ([1.0, 0.0], [0.0, 1.0])], tol)
    assert tiers == ["acceptable", "fail"] and g.value[1] == 0.0  # 1 - cos = 5e-5 on the cosine ladder
