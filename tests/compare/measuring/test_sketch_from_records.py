"""The sketch that every record now carries decides pairs the summaries alone cannot: two summary traces
written by the emitter, one element of an 896-wide hidden state apart (the leading values and the
checkpoints' names alike), are not called within tolerance, by the sketch's proven lower bound on
‖a − b‖; the same traces unchanged are."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.compare import compare
from orchlog.compare.result import OK
from tests.tracegen import record, write_jsonl

WIDTH = 896


def _traces(tmp_path, rng: np.random.Generator, changed: int | None):
    hidden = [rng.normal(0, 1, WIDTH).astype(np.float32) for _ in range(4)]
    ours = [h.copy() for h in hidden]
    if changed is not None:
        ours[2][changed] += np.float32(0.5)
    write = lambda name, states: write_jsonl(  # noqa: E731
        tmp_path / name, [record("attn_out", h, token_idx=0, layer=layer) for layer, h in enumerate(states)]
    )
    return write("ref.jsonl", hidden), write("ours.jsonl", ours)


@pytest.mark.parametrize("seed", range(5))
def test_one_element_apart_past_the_leading_values_is_not_within_tolerance(tmp_path, seed):
    rng = np.random.default_rng(seed)
    ref, ours = _traces(tmp_path, rng, changed=int(rng.integers(10, WIDTH)))
    result = compare(ref, ours)
    assert result.status != OK
    pair = result.first  # the pair that decided the verdict
    assert pair is not None
    assert (pair.layer, pair.tier, pair.basis) == (2, "fail", "sketch")
    # ‖a − b‖ = 0.5; the proven lower bound is at worst 0.5 · √(0.3589 / 2.1142) (the estimator's band), less
    # the stored rows' rounding.
    assert 0.5 * np.sqrt(0.3589 / 2.1142) * 0.99 < pair.bounds["l2"][0] <= 0.5 <= pair.bounds["l2"][1]


def test_identical_summaries_pass(tmp_path):
    ref, ours = _traces(tmp_path, np.random.default_rng(9), changed=None)
    assert compare(ref, ours).status == OK
