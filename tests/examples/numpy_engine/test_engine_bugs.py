"""Each injected bug changes the logits, and first shows at the stage, layer
and token where the real incident did (compared with the clean engine)."""

from __future__ import annotations

import numpy as np
import pytest

from examples.numpy_engine.bugs import Bug
from examples.numpy_engine.run import run_numpy_engine
from tests.examples.numpy_engine.test_engine import Recorder

# (checkpoint, stage, layer, token_idx) of the first record that differs.
FIRST_DIVERGENCE = {
    Bug.TRANSPOSED_EMBEDDING: ("embd", None, None, 0),
    Bug.NO_QKV_BIAS: ("Qcur", "add", 0, 0),
    # Position 0 rotates by zero, so token 0's records are untouched (its kq row holds the cells it
    # attends to, its own only); the damage starts at the second token's K.
    Bug.ROPE_K_PER_Q_HEAD: ("Kcur", "rope", 0, 1),
    Bug.EPS_FROM_WRONG_KEY: ("attn_norm", None, 0, 0),
    Bug.NORM_WEIGHT_TWICE: ("ffn_norm", None, 0, 0),
    Bug.SKIPPED_ATTN_RESIDUAL: ("ffn_inp", None, 0, 0),
    Bug.BF16_FFN_OUT: ("ffn_out", None, 0, 0),
    # The prompt pass is right; the first decode step (position 8) is rotated one position short.
    Bug.DECODE_POSITION_OFF_BY_ONE: ("Qcur", "rope", 0, 8),
    Bug.LAST_LAYER_NO_V_BIAS: ("Vcur", "add", 1, 0),  # the tiny model's last layer is layer 1
    Bug.ATTN_NORM_WITHOUT_WEIGHT: ("attn_norm", None, 0, 0),
    Bug.SWAPPED_SWIGLU: ("ffn_swiglu", None, 0, 0),
    Bug.ROPE_ADJACENT_PAIRS: ("Qcur", "rope", 0, 1),  # position 0 rotates by nothing in any layout
    Bug.KQ_UNSCALED: ("kq_soft_max", None, 0, 1),  # token 0 attends to itself alone: probability 1 at any scale
    Bug.EPS_HARD_CODED: ("attn_norm", None, 0, 0),
}


def _first_divergence(clean: Recorder, buggy: Recorder) -> tuple:
    """Walks tokens in order, then the records of that token in execution order."""
    by_token = lambda r: sorted(r.records, key=lambda rec: rec[3])  # noqa: E731  (stable: keeps execution order)
    for (checkpoint, stage, layer, token, _, a), ref in zip(by_token(buggy), by_token(clean)):
        assert (checkpoint, stage, layer, token) == ref[:4]
        if not np.array_equal(a, ref[5]):
            return checkpoint, stage, layer, token
    return ()


@pytest.mark.parametrize("bug", list(FIRST_DIVERGENCE), ids=lambda b: b.name.lower())
def test_the_bug_first_shows_where_the_incident_did(tiny_gguf, bug):
    clean, buggy = Recorder(), Recorder()
    run_numpy_engine(tiny_gguf, observe=clean)
    run_numpy_engine(tiny_gguf, bugs=bug, observe=buggy)
    assert _first_divergence(clean, buggy) == FIRST_DIVERGENCE[bug]


@pytest.mark.parametrize("bug", list(FIRST_DIVERGENCE), ids=lambda b: b.name.lower())
def test_the_bug_moves_the_logits_far_beyond_float32_noise(tiny_gguf, numpy_logits, bug):
    assert np.abs(run_numpy_engine(tiny_gguf, bugs=bug) - numpy_logits).max() > 1e-3


def test_the_rope_bug_leaves_the_first_position_bit_identical(tiny_gguf, numpy_logits):
    logits = run_numpy_engine(tiny_gguf, bugs=Bug.ROPE_K_PER_Q_HEAD)
    assert np.array_equal(logits[0], numpy_logits[0])
    assert not np.array_equal(logits[1], numpy_logits[1])
