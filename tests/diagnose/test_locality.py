"""Introduced here or inherited: the output's relative error against the inputs'."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Pair, Side, Where
from orchlog.diagnose.locality import locality, pair_error

X = np.random.default_rng(0).standard_normal(64)


def _pair(name: str, rel_error: float) -> Pair:
    return Pair(Where(name, 0, None, 0), Side.of(X), Side.of(X * (1 + rel_error)))


def test_inputs_that_agree_mean_the_error_was_introduced_here():
    loc = locality(_pair("out", 0.1), [_pair("in", 1e-7)], [])
    assert loc.verdict == "introduced" and "introduced at this stage" in loc.message and "in, layer 0" in loc.message


def test_inputs_that_already_differ_mean_it_was_inherited():
    loc = locality(_pair("out", 0.1), [_pair("in", 0.05)], [("in", pair_error(_pair("in", 0.05)))])
    assert loc.verdict == "inherited" and "x2" in loc.message
    assert loc.earlier_worst[0] == "in"


def test_without_inputs_it_cannot_be_told():
    loc = locality(_pair("out", 0.1), [], [])
    assert loc.verdict == "undecided" and "first record of its token" in loc.message


def test_relative_errors_and_non_finite_values():
    assert abs(pair_error(_pair("x", 0.01)).relative - 0.01) < 1e-9
    bad = Pair(Where("x"), Side.of(X), Side.of(np.where(np.arange(64) == 3, np.nan, X)))
    assert pair_error(bad).relative == float("inf")
