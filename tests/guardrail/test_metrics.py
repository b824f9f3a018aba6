"""Per-token metrics are `orchlog compare --per-token`'s (one logits math), and their aggregates."""

from __future__ import annotations

import math

import pytest

from examples.guardrail.artifacts import Pair
from orchlog.compare.per_token import compare_per_token
from orchlog.guardrail import guardrail
from orchlog.guardrail.metrics import TokenMetrics, aggregate
from orchlog.read.paths import open_trace

RUN = "runs/kv_aligned_0/seed_0"


def test_each_position_s_numbers_are_those_of_compare_per_token_on_the_same_files(tree):
    tree.write_pair(Pair({"kv_aligned": 0, "seed": 0}, drift=True, diverge_at=3))
    (pair,) = guardrail(tree.root).pairs
    per_token = compare_per_token(
        open_trace(tree.root / RUN / "prefill/logits.jsonl.gz"), open_trace(tree.root / RUN / "decode/logits.jsonl.gz")
    )
    assert [t.token_idx for t in pair.tokens] == [p.token_idx for p in per_token.positions]
    for mine, theirs in zip(pair.tokens, per_token.positions):
        d = theirs.diff
        assert (mine.cos_sim, mine.l2, mine.max_abs_diff, mine.p99_abs_diff, mine.kl, mine.top1_match) == (
            d.cosine,
            d.l2,
            d.max_abs,
            d.p99_abs,
            d.kl,
            d.top1_match,
        )
    assert pair.tokens[3].max_abs_diff > 0.2 > pair.tokens[2].max_abs_diff > 0


def _token(i, max_abs=0.0, p99=0.0, top1=(1, 1), cos=1.0, kl=0.0):
    return TokenMetrics(i, None, max_abs, p99, top1[0], top1[1], cos, 0.0, kl)


def test_aggregates_take_the_worst_position_for_differences_and_the_mean_for_agreement():
    agg = aggregate([_token(0, 0.1, 0.01, cos=0.5, kl=0.2), _token(1, 0.3, 0.02, top1=(4, 5), cos=1.0, kl=0.4)])
    assert agg == {
        "max_abs_diff": 0.3,
        "p99_abs_diff": 0.02,
        "top1_agreement": 0.5,
        "cos_sim_mean": 0.75,
        "cos_sim_min": 0.5,
        "kl_mean": pytest.approx(0.3),
        "kl_max": 0.4,
    }


def test_a_nan_anywhere_makes_its_aggregate_nan_and_no_positions_make_every_aggregate_nan():
    agg = aggregate([_token(0, kl=math.nan), _token(1)])
    assert math.isnan(agg["kl_max"]) and math.isnan(agg["kl_mean"]) and agg["max_abs_diff"] == 0
    assert all(math.isnan(v) for v in aggregate([]).values())
