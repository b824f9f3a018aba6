"""Introduced here or inherited: the output's relative error against the inputs', or, where the noise was
measured, each against its own noise."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Pair, Side, Where
from orchlog.diagnose.locality import locality, pair_error

X = np.random.default_rng(0).standard_normal(64)


def _pair(name: str, rel_error: float) -> Pair:
    return Pair(Where(name, 0, None, 0), Side.of(X), Side.of(X * (1 + rel_error)))


def _error(name: str, rel_error: float, rel_noise: float | None = None):
    """(label, error) of a pair `rel_error` off, with a measured noise `rel_noise` of the reference's norm."""
    pair = _pair(name, rel_error)
    noise = None if rel_noise is None else rel_noise * float(np.linalg.norm(X))
    return pair.where.label(), pair_error(pair, noise)


def test_inputs_that_agree_mean_the_error_was_introduced_here():
    loc = locality(_error("out", 0.1)[1], [_error("in", 1e-7)], [])
    assert loc.verdict == "introduced" and "introduced at this stage" in loc.message and "in, layer 0" in loc.message


def test_inputs_that_already_differ_mean_it_was_inherited():
    loc = locality(_error("out", 0.1)[1], [_error("in", 0.05)], [_error("in", 0.05)])
    assert loc.verdict == "inherited" and "x2" in loc.message
    assert loc.earlier_worst is not None
    assert loc.earlier_worst[0] == "in, layer 0, token 0"


def test_without_inputs_it_cannot_be_told():
    loc = locality(_error("out", 0.1)[1], [], [])
    assert loc.verdict == "undecided" and "first record of its token" in loc.message


def test_relative_errors_and_non_finite_values():
    assert abs(pair_error(_pair("x", 0.01)).relative - 0.01) < 1e-9
    bad = Pair(Where("x"), Side.of(X), Side.of(np.where(np.arange(64) == 3, np.nan, X)))
    assert pair_error(bad).relative == float("inf")


def test_against_the_noise_inputs_within_theirs_and_an_output_beyond_its_own_is_introduced():
    # A quantized reference: the input differs by 2% (0.7x its 3% noise), the output by 5% (1.8x its 2.8%).
    # By relative errors alone (5% against 2%) this reads as inherited.
    out, inputs = _error("out", 0.05, 0.028)[1], [_error("in", 0.02, 0.03)]
    assert locality(out, inputs, []).verdict == "inherited"
    loc = locality(out, inputs, [], multiple=1.25)
    assert loc.verdict == "introduced" and "output at 1.79x its noise" in loc.message, loc.message


def test_against_the_noise_an_input_beyond_its_own_means_inherited_and_both_within_means_undecided():
    assert locality(_error("out", 0.1, 0.02)[1], [_error("in", 0.05, 0.02)], [], 1.25).verdict == "inherited"
    loc = locality(_error("out", 0.02, 0.02)[1], [_error("in", 0.01, 0.02)], [], 1.25)
    assert loc.verdict == "undecided" and "within the noise" in loc.message
