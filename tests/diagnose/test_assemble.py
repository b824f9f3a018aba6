"""The case around a divergence: its inputs, the same checkpoint at other tokens, the values elsewhere."""

from __future__ import annotations

from orchlog.diagnose.assemble import Assembler
from orchlog.diagnose.neighbours import Target, gather
from orchlog.read.paths import open_trace
from tests.diagnose.runs import missing_bias_from_layer, traces

KEY = ("checkpoint", "layer", "stage", "token_idx", "step", "rank")


def _assembled(tmp_path, target, **kw):
    a, b = traces(tmp_path, missing_bias_from_layer(1), **kw)
    nb = gather(open_trace(a), open_trace(b), [target])
    return Assembler(nb, KEY, lambda name: False).assemble(target)


def test_the_inputs_are_the_same_tensors_earlier_stage_and_the_previous_record(tmp_path):
    built = _assembled(tmp_path, Target("Qcur", 1, "add", 2, 0))
    assert [p.where.label() for p in built.case.inputs] == ["Qcur, layer 1, token 2"]
    built = _assembled(tmp_path, Target("attn_out", 1, None, 2, 0))
    assert [p.where.label() for p in built.case.inputs] == ["Qcur@add, layer 1, token 2"]


def test_the_same_checkpoint_at_every_token_is_there_in_order(tmp_path):
    built = _assembled(tmp_path, Target("Qcur", 1, "add", 2, 0), tokens=5)
    assert [p.where.token_idx for p in built.case.tokens] == [0, 1, 2, 3, 4]
    assert set(built.case.token_inputs) == {0, 1, 2, 3, 4}


def test_values_elsewhere_carry_their_relation(tmp_path):
    built = _assembled(tmp_path, Target("Qcur", 1, "add", 2, 0), tokens=5)
    relations = {(r.where.checkpoint, r.where.layer, r.where.token_idx): r.relation for r in built.case.pool}
    assert relations[("Qcur", 1, 2)] == "earlier"
    assert relations[("l_out", 2, 2)] == "later"
    assert relations[("Qcur", 1, 0)] == "other_token"
    assert relations[("Qcur", 0, 2)] == "other_layer"


def test_locality_and_growth_read_every_earlier_record_and_layer(tmp_path):
    built = _assembled(tmp_path, Target("Qcur", 1, "add", 2, 0), layers=3)
    assert [layer for layer, _ in built.layers] == [0, 1, 2]
    assert built.earlier[0][0] == "embd, token 2" and len(built.earlier) == 1 + 6 + 2


def test_a_target_missing_from_either_side_is_none(tmp_path):
    assert _assembled(tmp_path, Target("Qcur", 7, "add", 2, 0)) is None
