"""equals_other_checkpoint: ours is the reference's value at another stage, token or layer."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Reference, Side, Where
from orchlog.diagnose.signatures.elsewhere import equals_other_checkpoint
from tests.diagnose.synthetic import case_of, noisy, reference


def test_a_skipped_residual_equals_the_stage_before_it():
    rng = np.random.default_rng(8)
    x, attn = rng.standard_normal(64), rng.standard_normal(64)
    earlier = Reference(Where("attn_out", 0, None, 0), Side.of(attn), "earlier")
    case = case_of((x + attn)[None], noisy(attn[None]), pool=[earlier])
    found = equals_other_checkpoint(case)
    assert found is not None and found.evidence["checkpoint"] == "attn_out" and found.confidence > 0.99
    assert "skipped" in found.message


def test_an_off_by_one_position_equals_the_previous_token():
    ref = reference()
    found = equals_other_checkpoint(case_of(ref, noisy(np.roll(ref, 1, axis=0)), at=3))
    assert found is not None and found.evidence["token_shift"] == 1 and "1 position(s) behind" in found.message


def test_the_loader_is_called_and_a_copy_of_the_reference_is_not_a_match():
    ref = reference(tokens=1)[0]
    loads = []

    def load():
        loads.append(1)
        return Side.of(ref.copy())

    case = case_of(ref[None], noisy(ref[None] * 3), pool=[Reference(Where("view"), load, "later")])
    assert equals_other_checkpoint(case) is None and loads == [1]


def test_on_summaries_an_equal_hash_is_a_match():
    ref = reference(tokens=1)[0]
    other = Side.summary(ref[:10] * 2, 64, stats={"rms": 1.0})
    other.blake3 = "ab" * 32
    ours = Side.summary(ref[:10] * 2, 64, stats={"rms": 1.0})
    ours.blake3 = "ab" * 32
    case = case_of(ref[None], ref[None], summary=10, pool=[Reference(Where("ffn_out", 1), other, "other_layer")])
    case.pair.ours = ours
    case.pair.ref.blake3 = "cd" * 32
    found = equals_other_checkpoint(case)
    assert found is not None and found.confidence == 0.6 and "layer" in found.message


def test_noise_matches_nothing():
    ref = reference()
    assert equals_other_checkpoint(case_of(ref, noisy(ref))) is None
