"""Grafted runs of the NumPy engine from llama.cpp's trace (four layers) tell accumulation from a bug: a
small error made at every layer is attributed to one stage of every layer, in comparable amounts; a bug in
one stage of one layer is attributed to that stage alone."""

from __future__ import annotations

import math

import numpy as np
import pytest

from examples.hunt.graft import prepare
from examples.numpy_engine.bugs import Bug
from orchlog.graft_report.local_error import INTRODUCED, INTRODUCED_SINCE
from orchlog.read.paths import open_trace

pytestmark = pytest.mark.slow  # builds llama.cpp (cached); 2 x 20 runs of the NumPy engine

LAYERS = 4


@pytest.fixture(scope="module")
def graft_dir(tmp_path_factory, run_tokens_program):
    directory = tmp_path_factory.mktemp("graft")
    prepare(directory, Bug.NONE, LAYERS, per_stage=False, program=run_tokens_program)  # the model, the reference
    return directory


def _reports(directory, bug):
    return prepare(directory, bug, LAYERS).reports()  # (per layer, per stage)


def _measured(report):
    return [r for r in report.rows if r.local is not None]


def _half_bf16_ulp_of_largest(reference, checkpoint, layer):
    """Half a bfloat16 ulp at the largest |value| the reference holds at `checkpoint` in `layer`: the most
    that rounding those values to bfloat16 can move one."""
    largest = max(
        float(np.abs(np.asarray(r.tensor(), dtype=np.float64)).max())
        for r in open_trace(reference)
        if r.checkpoint == checkpoint and r.layer == layer
    )
    return 2.0 ** (math.floor(math.log2(largest)) - 8)


def test_a_rounding_at_every_layer_is_attributed_to_that_stage_of_every_layer_in_comparable_amounts(graft_dir):
    per_layer, per_stage = _reports(graft_dir, Bug.BF16_FFN_OUT)
    # Per stage: every layer's ffn_out, and nothing else, makes an error.
    failing = {(r.stage[0], r.stage[1]) for r in _measured(per_stage) if not r.local.measure.proven_within}
    assert failing == {(layer, "ffn_out") for layer in range(LAYERS)}
    own = {r.stage[0]: r for r in per_stage.rows if r.stage[1] == "ffn_out"}
    assert all(own[layer].verdict == INTRODUCED and own[layer].local.hops == 0 for layer in range(LAYERS))
    # ... of a bfloat16 rounding's size, at every layer (at least a quarter of the most it can be).
    for layer in range(LAYERS):
        bound = _half_bf16_ulp_of_largest(per_stage.reference, "ffn_out", layer)
        assert bound / 4 <= own[layer].local.measure.max_abs <= bound
    errors = [own[layer].local.measure.max_abs for layer in range(LAYERS)]
    assert max(errors) / min(errors) < 2.5
    # Per layer (each layer fed the reference's input): every layer after the first makes an error of its own,
    # ffn_out the worst of it. Layer 0 has no graft point before it: not measured there.
    worst = {r.stage[0]: r for r in per_layer.layers if r.stage[0] >= 0}
    assert set(worst) == set(range(1, LAYERS))
    assert all(r.stage[1] == "ffn_out" and r.verdict == INTRODUCED_SINCE for r in worst.values())


def test_a_bug_in_one_stage_of_the_last_layer_is_attributed_to_that_stage_alone(graft_dir):
    per_layer, per_stage = _reports(graft_dir, Bug.LAST_LAYER_NO_V_BIAS)
    last = LAYERS - 1
    failing = [r for r in _measured(per_stage) if not r.local.measure.proven_within]
    assert [(r.stage, r.verdict, r.local.hops) for r in failing] == [((last, "Vcur", "add"), INTRODUCED, 0)]
    assert per_stage.largest.stage == (last, "Vcur", "add")
    # Per layer: only the last layer makes an error; every earlier one is proven within tolerance.
    failing_layers = {r.stage[0] for r in _measured(per_layer) if not r.local.measure.proven_within}
    assert failing_layers == {last}
    assert per_layer.largest.stage[0] == last
