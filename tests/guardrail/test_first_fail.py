"""First-fail tracking: the first failing pair in matrix order, and the first failing token in it."""

from __future__ import annotations

from examples.guardrail.artifacts import Pair
from orchlog.guardrail import guardrail
from orchlog.report import render_text
from tests.guardrail.trees import write_matrix


def test_the_first_failing_pair_in_matrix_order_and_its_first_diverging_token(tree):
    write_matrix(tree, {(1, 2): {"diverge_at": 1}, (1, 1): {"diverge_at": 3}})
    result = guardrail(tree.root)
    first = result.to_json()["first_fail"]
    assert first["pair"] == "kv_aligned=1 seed=1" and first["verdict"] == "FAIL_EQUIV"
    assert first["token_idx"] == tree.prompt_len + 3 and first["axes"] == {"kv_aligned": 1, "seed": 1}
    assert first["reasons"][0].startswith("p99_abs_diff 0.25")
    assert f"FIRST FAIL: kv_aligned=1 seed=1 (FAIL_EQUIV) at token {tree.prompt_len + 3}" in render_text(result)


def test_matrix_order_follows_the_order_config_json_lists_the_values_in(tree):
    write_matrix(tree, {(1, 2): {"diverge_at": 1}, (1, 1): {"diverge_at": 3}})
    tree.write_config(kv_aligned=[1, 0], seeds=[2, 0, 1])
    result = guardrail(tree.root)
    assert [p.label for p in result.pairs][:3] == ["kv_aligned=1 seed=2", "kv_aligned=1 seed=0", "kv_aligned=1 seed=1"]
    assert result.first_fail is not None
    assert result.first_fail.label == "kv_aligned=1 seed=2"
    assert result.to_json()["first_fail"]["token_idx"] == tree.prompt_len + 1


def test_the_token_id_of_the_first_failing_token_is_given(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, diverge_at=2))
    pair = guardrail(tree.root).first_fail
    assert pair is not None
    failing = pair.first_failing_token()
    assert failing is not None
    token, why = failing
    assert token.token_idx == tree.prompt_len + 2 and token.token_id is not None
    assert {b.metric for b in why} == {"p99_abs_diff", "max_abs_diff"}


def test_a_pairing_error_is_a_first_fail_at_the_first_position_it_names(tree):
    write_matrix(tree, {(0, 1): {"token_id_changed_at": 2}, (1, 2): {"diverge_at": 0}})
    first = guardrail(tree.root).to_json()["first_fail"]
    assert first["pair"] == "kv_aligned=0 seed=1" and first["verdict"] == "PAIRING_ERROR"
    assert first["token_idx"] == tree.prompt_len + 2 and first["reasons"][0].startswith("TOKEN_MISMATCH")


def test_a_passing_matrix_has_no_first_fail(tree):
    result = guardrail(write_matrix(tree).root)
    assert result.first_fail is None and result.to_json()["first_fail"] is None
