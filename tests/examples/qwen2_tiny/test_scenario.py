"""The scenario: a prompt pass, then one single-token call per decode token."""

from __future__ import annotations

from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario


def test_step_0_is_the_whole_prompt_and_each_decode_token_is_its_own_step():
    calls = list(Scenario(prompt=(5, 6, 7), decode=(8, 9)).calls())
    assert [(c.step, c.first_position, c.tokens) for c in calls] == [(0, 0, (5, 6, 7)), (1, 3, (8,)), (2, 4, (9,))]


def test_positions_cover_every_token_once_in_order():
    positions = [p for call in DEFAULT_SCENARIO.calls() for p in call.positions]
    assert positions == list(range(DEFAULT_SCENARIO.n_positions))


def test_default_tokens_are_distinct_and_within_the_vocabulary():
    tokens = DEFAULT_SCENARIO.prompt + DEFAULT_SCENARIO.decode
    assert len(set(tokens)) == len(tokens)
    assert all(0 <= t < TINY.n_vocab for t in tokens)
    assert DEFAULT_SCENARIO.n_positions <= TINY.n_ctx


def test_as_one_pass_keeps_the_tokens_and_drops_the_decode_steps():
    one_pass = Scenario(prompt=(5, 6), decode=(7,)).as_one_pass()
    assert [call.tokens for call in one_pass.calls()] == [(5, 6, 7)]
