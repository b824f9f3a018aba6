"""Thresholds: the seed's defaults, a thresholds section in config.json, and overrides (the CLI's flags)."""

from __future__ import annotations

import pytest

from examples.guardrail.artifacts import Pair
from orchlog.errors import OrchlogError
from orchlog.guardrail import FAIL_EQUIV, PASS_EQUIV, GuardrailOptions, Thresholds, guardrail


def test_the_defaults_are_the_seed_s():
    assert Thresholds().active() == [
        ("p99_abs_diff", "max", 1e-3),
        ("max_abs_diff", "max", 5e-3),
        ("top1_agreement", "min", 0.999),
    ]


def _drifting_must_match_pair(tree, **config):
    tree.write_config(kv_aligned=[1], seeds=[0], **config)
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, drift=True))  # max |diff| about 0.06
    return tree.root


def test_a_thresholds_section_in_config_json_loosens_the_bounds(tree):
    root = _drifting_must_match_pair(tree, thresholds={"max_abs_diff": 0.5, "p99_abs_diff": 0.5})
    result = guardrail(root)
    assert result.pairs[0].verdict == PASS_EQUIV and result.to_json()["thresholds"]["max_abs_diff"] == 0.5


def test_overrides_win_over_config_json(tree):
    root = _drifting_must_match_pair(tree, thresholds={"max_abs_diff": 0.5, "p99_abs_diff": 0.5})
    result = guardrail(root, GuardrailOptions(thresholds={"p99_abs_diff": 1e-4}))
    assert result.pairs[0].verdict == FAIL_EQUIV and [b.metric for b in result.pairs[0].breaches] == ["p99_abs_diff"]


def test_bounds_that_are_off_by_default_can_be_set(tree):
    root = _drifting_must_match_pair(tree, thresholds={"max_abs_diff": 0.5, "p99_abs_diff": 0.5, "kl_max": 1e-9})
    (pair,) = guardrail(root).pairs
    assert pair.verdict == FAIL_EQUIV and [b.metric for b in pair.breaches] == ["kl_max"]


def test_a_null_threshold_turns_a_bound_off(tree):
    root = _drifting_must_match_pair(tree, thresholds={"max_abs_diff": None, "p99_abs_diff": None})
    assert guardrail(root).pairs[0].verdict == PASS_EQUIV


@pytest.mark.parametrize(
    "section, message",
    [
        ({"max_abs": 1.0}, "unknown threshold 'max_abs'"),
        ({"max_abs_diff": -1}, "non-negative number"),
        ({"top1_agreement": "high"}, "non-negative number"),
    ],
)
def test_bad_thresholds_in_config_json_are_named(tree, section, message):
    root = _drifting_must_match_pair(tree, thresholds=section)
    with pytest.raises(OrchlogError, match=message) as err:
        guardrail(root)
    assert "config.json: thresholds" in str(err.value)
