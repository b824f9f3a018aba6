"""Logits math: stable KL, top-1, ranks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchlog.compare.measuring.logits import kl_divergence, log_softmax, logits_diff, rank_of, top1


def test_log_softmax_is_stable_for_huge_logits():
    x = np.array([1e4, 1e4 - 1, -1e4])
    lp = log_softmax(x)
    assert np.isfinite(lp).all() and np.exp(lp).sum() == pytest.approx(1.0)
    assert lp[0] - lp[1] == pytest.approx(1.0)


def test_kl_is_zero_for_equal_logits_and_matches_the_definition():
    rng = np.random.default_rng(2)
    p_logits, q_logits = rng.standard_normal(50), rng.standard_normal(50)
    assert kl_divergence(p_logits, p_logits + 3.0) == pytest.approx(0.0, abs=1e-12)  # a shift changes nothing
    p = np.exp(p_logits) / np.exp(p_logits).sum()
    q = np.exp(q_logits) / np.exp(q_logits).sum()
    assert kl_divergence(p_logits, q_logits) == pytest.approx(np.sum(p * np.log(p / q)))


def test_rank_counts_strictly_higher_scores_and_top1_ignores_nan():
    x = np.array([0.5, 3.0, 3.0, np.nan, -1.0])
    assert top1(x) == 1
    assert rank_of(x, 1) == 1 and rank_of(x, 2) == 1 and rank_of(x, 0) == 3 and rank_of(x, 4) == 4
    with pytest.raises(ValueError, match="outside the vocabulary"):
        rank_of(x, 9)


def test_paris_ranking_first_in_the_reference_and_lower_in_ours_is_reported():
    ref = np.zeros(1000)
    ref[600] = 17.2
    ours = np.linspace(10, 0, 1000)
    ours[600] = 8.9
    d = logits_diff(ref, ours, track_token=600)
    assert (d.rank_a, d.rank_b) == (1, 111) and not d.top1_match and d.kl > 0
    assert math.isfinite(d.cosine) and d.max_abs == 10.0  # ours[0] = 10 where the reference has 0
