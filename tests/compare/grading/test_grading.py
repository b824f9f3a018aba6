"""Grading: tiers from the rule's bounds, failure from its threshold, cos_tol, sizes and NaN mismatches."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.compare.grading.tiers import TIER_NAMES, grade
from orchlog.compare.measuring.metrics import measure
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord
from orchlog.tolerances.rules import load_tolerances


def _grades(pairs, tol=None, name="blk.attn_norm"):
    a = RecordBatch.from_records([TraceRecord(name, dtype="f64", numel=len(x), values=np.array(x)) for x, _ in pairs])
    b = RecordBatch.from_records([TraceRecord(name, dtype="f64", numel=len(y), values=np.array(y)) for _, y in pairs])
    idx = np.arange(len(pairs))
    t = measure(a, b, idx, idx, lambda _: False)
    g = grade(t, tol or load_tolerances("absolute"))
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
    tiers, g = _grades([([0.0], [3.0]), ([0.0], [0.05])], load_tolerances("absolute").overridden(threshold=5.0))
    assert tiers == ["warning", "acceptable"]
    assert g.severity.tolist() == pytest.approx([0.6, 0.01])


def test_cos_tol_fails_pairs_whose_direction_is_off_even_when_max_abs_is_small():
    small = [1e-3, 0.0]
    tiers, g = _grades([(small, [0.0, 1e-3])], load_tolerances("absolute").overridden(cos_tol=0.999))
    assert tiers == ["fail"] and g.reason[0] == "cosine < 0.999"


def test_sizes_that_differ_and_nan_where_the_other_side_is_finite_fail():
    tiers, g = _grades([([1.0, 2.0], [1.0]), ([np.nan, 1.0], [0.0, 1.0]), ([np.nan], [np.nan])])
    assert tiers == ["fail", "fail", "exact"]
    assert g.reason[0] == "sizes differ" and "NaN/Inf" in g.reason[1]


def test_a_higher_is_better_metric_fails_below_its_threshold():
    tol = load_tolerances("absolute").overridden(metric="cosine", threshold=0.99)
    tiers, g = _grades([([1.0, 0.0], [1.0, 0.01]), ([1.0, 0.0], [0.0, 1.0])], tol)
    assert tiers == ["acceptable", "fail"] and g.value[1] == 0.0  # 1 - cos = 5e-5 on the cosine ladder


def _interval_grades(lo, hi, metric="max_abs", cos=(-1.0, 1.0), exact=False, hashes=("a", "b"), **override):
    """Grades of one summary pair whose evidence proves `metric` in [lo, hi] (set on the measured table)."""
    from orchlog.compare.pairing.semantics import Semantics

    rec = lambda h: TraceRecord("blk.attn_norm", dtype="f32", numel=100, blake3=h * 64)  # noqa: E731
    a, b = RecordBatch.from_records([rec(hashes[0])]), RecordBatch.from_records([rec(hashes[1])])
    t = measure(a, b, np.array([0]), np.array([0]), lambda _: False, semantics=Semantics(exact=exact))
    t.lo["cosine"][0], t.hi["cosine"][0] = cos
    t.lo[metric][0], t.hi[metric][0] = lo, hi
    g = grade(t, load_tolerances("absolute").overridden(metric=metric, **override))
    return TIER_NAMES[g.tier[0]], g


@pytest.mark.parametrize(
    "lo, hi, tier",
    [
        (0.0, 5e-4, "close"),  # proven under 1e-3: the tier comes from the upper end
        (0.0, 5e-3, "acceptable"),
        (1e-3, 0.2, "undecided"),  # holds the threshold 1e-2: neither proven within nor beyond
        (0.0, float("inf"), "undecided"),  # nothing proven at all
        (0.0065, 0.196, "undecided"),
        (0.01, 0.2, "fail"),  # the lower end reaches the threshold
    ],
)
def test_a_pair_passes_only_when_its_whole_interval_is_within_tolerance(lo, hi, tier):
    got, g = _interval_grades(lo, hi)
    assert got == tier and (g.lo[0], g.hi[0]) == (lo, hi)


def test_cosine_intervals_grade_the_other_way_round():
    assert _interval_grades(0.995, 1.0, metric="cosine", threshold=0.99)[0] == "warning"
    assert _interval_grades(0.9, 0.995, metric="cosine", threshold=0.99)[0] == "undecided"
    assert _interval_grades(0.5, 0.98, metric="cosine", threshold=0.99)[0] == "fail"


def test_cos_tol_is_one_more_condition_on_the_cosine_interval():
    assert _interval_grades(0.0, 1e-4, cos=(0.9995, 1.0), cos_tol=0.999)[0] == "close"
    assert _interval_grades(0.0, 1e-4, cos=(0.99, 1.0), cos_tol=0.999)[0] == "undecided"
    got, g = _interval_grades(0.0, 1e-4, cos=(0.9, 0.99), cos_tol=0.999)
    assert got == "fail" and g.reason[0] == "cosine < 0.999"


def test_exact_passes_equal_hashes_fails_different_ones_and_decides_nothing_else():
    assert _interval_grades(0.0, 1e-9, exact=True, hashes=("a", "a"))[0] == "exact"
    got, g = _interval_grades(0.0, 1e-9, exact=True)
    assert got == "fail" and "--exact" in g.reason[0]
    assert _interval_grades(0.0, 1e-9, exact=True, hashes=("a", ""))[0] == "undecided"
