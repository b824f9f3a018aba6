"""support_change: non-zero where the reference is exactly zero, or the reverse."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.signatures.support import support_change
from tests.diagnose.synthetic import case_of, noisy


def _masked_softmax(scores: np.ndarray, seen: int) -> np.ndarray:
    s = np.where(np.arange(scores.shape[-1]) < seen, scores, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


SCORES = np.random.default_rng(9).standard_normal((1, 4, 16))


def test_a_mask_off_by_one_sees_one_more_position_in_every_row():
    ref, ours = _masked_softmax(SCORES, 5), _masked_softmax(SCORES, 6)
    found = support_change(case_of(ref.reshape(1, -1), noisy(ours.reshape(1, -1)), shape=(4, 16)))
    assert found is not None and found.evidence["columns"] == [5]
    assert found.evidence["nonzero_where_reference_zero"] == 4 and "mask" in found.message


def test_a_dropped_row_is_zero_where_the_reference_is_not():
    ref = _masked_softmax(SCORES, 8).reshape(4, 16)
    ours = ref.copy()
    ours[2] = 0.0
    found = support_change(case_of(ref.reshape(1, -1), ours.reshape(1, -1), shape=(4, 16)))
    assert found is not None and found.evidence["zero_where_reference_nonzero"] == 8


def test_noise_poured_over_a_sparse_tensor_is_not_a_support_change():
    ref = _masked_softmax(SCORES, 5).reshape(1, -1)
    ours = ref + 0.01 * np.random.default_rng(10).standard_normal(ref.shape)
    assert support_change(case_of(ref, ours, shape=(4, 16))) is None


def test_flushed_denormals_and_clean_noise_do_not_count():
    ref = _masked_softmax(SCORES, 5).reshape(1, -1)
    ours = noisy(ref)
    ours[0, 10] = 1e-40
    assert support_change(case_of(ref, ours, shape=(4, 16))) is None
