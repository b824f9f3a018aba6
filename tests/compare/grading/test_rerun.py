"""The selector that reruns one record finds exactly that record again, whatever its name holds."""

from __future__ import annotations

import shlex

import pytest

from orchlog import selector
from orchlog.compare.grading import rerun


@pytest.mark.parametrize("name", ["attn_norm", "blk.3.attn,norm", " padded\t", "a*b?c", "x=y"])
def test_the_selector_parses_and_matches_the_record_it_was_made_for(name):
    keys = {"checkpoint": name, "layer": 3, "stage": "rope", "token_idx": 5, "step": 0, "rank": 1}
    sel = selector.parse(rerun.selector(keys))
    record = {**keys, "checkpoint": name}
    assert sel is not None
    assert sel.matches(record)
    assert not sel.matches({**record, "token_idx": 6}) and not sel.matches({**record, "layer": 2})


def test_null_fields_and_rank_0_are_left_out():
    keys = {"checkpoint": "logits", "layer": None, "stage": None, "token_idx": 7, "step": None, "rank": 0}
    assert rerun.selector(keys) == "checkpoint=logits,token=7"


def test_the_command_quotes_the_selector_for_a_shell():
    cmd = rerun.command({"checkpoint": "a b", "token_idx": 1})
    env, select = shlex.split(cmd)
    assert env == "ORCH_LOG_MODE=full" and select == "ORCH_LOG_SELECT=checkpoint=a b,token=1"
