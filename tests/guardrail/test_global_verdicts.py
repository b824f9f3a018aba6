"""Each global verdict, produced on a generated artifact tree."""

from __future__ import annotations

from orchlog.guardrail import (
    EXPECTED_DRIFT_ONLY,
    FAIL_GUARDRAIL,
    INCOMPLETE,
    PASS_GUARDRAIL,
    PASS_GUARDRAIL_LOCAL,
    guardrail,
)
from orchlog.report import render_markdown, render_text
from tests.guardrail.trees import write_matrix


def test_a_complete_declared_matrix_whose_must_match_pairs_agree_is_pass_guardrail(tree):
    result = guardrail(write_matrix(tree).root)
    assert result.verdict == PASS_GUARDRAIL and result and result.exit_code == 0
    assert [p.verdict for p in result.pairs] == ["EXPECTED_DRIFT"] * 3 + ["PASS_EQUIV"] * 3
    assert result.to_json()["full_verdict"] is True and not result.missing


def test_a_must_match_pair_beyond_its_thresholds_is_fail_guardrail(tree):
    result = guardrail(write_matrix(tree, {(1, 1): {"diverge_at": 3}}).root)
    assert result.verdict == FAIL_GUARDRAIL and not result and result.exit_code == 1
    assert [p.label for p in result.pairs if p.verdict == "FAIL_EQUIV"] == ["kv_aligned=1 seed=1"]


def test_a_pairing_error_fails_the_guardrail_even_in_a_pair_allowed_to_drift(tree):
    result = guardrail(write_matrix(tree, {(0, 2): {"token_id_changed_at": 0}}).root)
    assert result.verdict == FAIL_GUARDRAIL
    assert [(p.label, p.verdict) for p in result.pairs if p.failed] == [("kv_aligned=0 seed=2", "PAIRING_ERROR")]


def test_declared_pairs_that_are_missing_make_it_incomplete_and_are_listed(tree):
    write_matrix(tree, seeds=(0, 1))
    tree.write_config(kv_aligned=[0, 1], seeds=[0, 1, 2])
    result = guardrail(tree.root)
    assert result.verdict == INCOMPLETE and result.exit_code == 1
    assert result.to_json()["missing_pairs"] == [
        {"pair": "kv_aligned=0 seed=2", "axes": {"kv_aligned": 0, "seed": 2}, "run_dir": "runs/kv_aligned_0/seed_2"},
        {"pair": "kv_aligned=1 seed=2", "axes": {"kv_aligned": 1, "seed": 2}, "run_dir": "runs/kv_aligned_1/seed_2"},
    ]
    assert "MISSING PAIRS" in render_text(result) and "kv_aligned=1 seed=2  (runs/kv_aligned_1/seed_2)" in render_text(
        result
    )


def test_a_failing_pair_outranks_missing_ones(tree):
    write_matrix(tree, {(1, 0): {"diverge_at": 0}}, seeds=(0, 1))
    tree.write_config(kv_aligned=[0, 1], seeds=[0, 1, 2])
    result = guardrail(tree.root)
    assert result.verdict == FAIL_GUARDRAIL and len(result.missing) == 2


def test_without_config_json_passing_pairs_give_a_local_verdict_labelled_as_not_full(tree):
    result = guardrail(write_matrix(tree, config=False).root)
    assert result.verdict == PASS_GUARDRAIL_LOCAL and result.exit_code == 0
    assert result.to_json()["full_verdict"] is False
    assert "not a full verdict" in render_text(result) and "not a full one" in render_markdown(result)


def test_without_config_json_a_failing_pair_still_fails(tree):
    result = guardrail(write_matrix(tree, {(1, 2): {"diverge_at": 1}}, config=False).root)
    assert result.verdict == FAIL_GUARDRAIL


def test_runs_that_are_all_allowed_to_drift_are_expected_drift_only(tree):
    assert guardrail(write_matrix(tree, kv_aligned=(0,), config=False).root).verdict == EXPECTED_DRIFT_ONLY
    declared = guardrail(write_matrix(tree, kv_aligned=(0,)).root)
    assert declared.verdict == EXPECTED_DRIFT_ONLY and declared.exit_code == 0


def test_a_declared_pair_whose_side_never_ran_is_incomplete_not_failed(tree):
    result = guardrail(write_matrix(tree, {(1, 1): {"missing": "side"}}).root)
    assert result.verdict == INCOMPLETE and result.exit_code == 1 and result.first_fail is None
    assert [(p.label, p.verdict) for p in result.pairs if p.verdict == INCOMPLETE] == [
        ("kv_aligned=1 seed=1", INCOMPLETE)
    ]
    assert result.counts()["INCOMPLETE"] == 1
    assert "MISSING RUNS (a side never ran; its pair is INCOMPLETE): 1" in render_text(result)
    assert "## Missing runs (1)" in render_markdown(result)


def test_a_side_that_ran_but_cannot_be_compared_still_fails(tree):
    result = guardrail(write_matrix(tree, {(1, 1): {"missing": "metadata"}, (0, 0): {"missing": "side"}}).root)
    assert result.verdict == FAIL_GUARDRAIL
    assert [p.verdict for p in result.pairs if p.failed] == ["PAIRING_ERROR"]
