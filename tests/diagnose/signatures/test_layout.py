"""transpose and permutation: the reference's values in another order."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.diagnose.signatures.layout import describe, permutation, transpose
from tests.diagnose.synthetic import case_of, noisy, reference


def test_a_transposed_record_is_named_with_its_view():
    ref = reference(n=48)
    ours = np.stack([r.reshape(6, 8).T.ravel() for r in ref])
    found = transpose(case_of(ref, ours, shape=(6, 8)))
    assert found is not None and found.evidence["view"] == "axes (1, 0) of shape (6, 8)"
    assert permutation(case_of(ref, ours, shape=(6, 8))) is None  # transpose names it


def test_a_table_read_down_its_columns_is_found_among_the_other_tokens():
    rng = np.random.default_rng(6)
    table = rng.standard_normal((64, 16)).astype(np.float32).astype(np.float64)  # 64 ids, 16 dims
    ids = np.array([0, 9, 17, 20, 33, 40, 52, 63])
    ref = table[ids]
    ours = table.reshape(-1)[np.arange(16)[None, :] * 64 + ids[:, None]]  # [dim][id] instead of [id][dim]
    found = transpose(case_of(ref, ours))
    assert found is not None and found.evidence["hits"] >= 3
    assert "transposed" in found.message


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda r: np.roll(r, 5), "shifted by"),
        (lambda r: r[::-1], "reversed"),
        (lambda r: np.r_[r[32:], r[:32]], "halves swapped"),
        (lambda r: r.reshape(4, 16)[[2, 0, 3, 1]].ravel(), "blocks of 16 reordered"),
        (lambda r: r.reshape(4, 16)[:, np.r_[np.arange(8, 16), np.arange(8)]].ravel(), "halves swapped within every"),
    ],
)
def test_permutations_are_named(make, words):
    ref = reference(n=64)
    found = permutation(case_of(ref, np.stack([make(r) for r in ref])))
    assert found is not None and words in found.message, found


def test_rows_permuted_along_an_axis_are_reported_on_that_axis():
    ref = reference(n=64)
    ours = np.stack([r.reshape(4, 16)[[1, 0, 2, 3]].ravel() for r in ref])
    found = permutation(case_of(ref, ours, shape=(4, 16)))
    assert found is not None and found.evidence["axis"] == 0 and found.evidence["order"][:2] == [1, 0]


def test_noise_and_random_errors_are_neither():
    ref = reference(n=64)
    for ours in (noisy(ref), ref + 0.1 * np.random.default_rng(7).standard_normal(ref.shape)):
        case = case_of(ref, ours, shape=(4, 16))
        assert transpose(case) is None and permutation(case) is None


def test_an_interleave_is_described_as_such():
    idx = np.r_[np.arange(0, 8, 2), np.arange(1, 8, 2)]
    assert describe(idx).startswith("even elements then odd")


def test_values_too_large_for_their_norm_are_no_rearrangement_of_others():
    ref = np.random.default_rng(0).standard_normal((1, 8))
    ours = np.array([[-1.3e5, -9.1e133, -5.4e8, 1.6e-83, -4.5e102, -1.2e170, 4.9e-4, -2.1e124]])  # a damaged file's
    with np.errstate(all="ignore"):
        assert permutation(case_of(ref, ours)) is None
        assert permutation(case_of(ours, ref)) is None
