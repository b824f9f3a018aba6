"""llama.cpp's Q/K row permutation and the relations tried on a mismatch."""

from __future__ import annotations

import numpy as np

from orchlog.weights.layout import alternatives, llama_permute, llama_unpermute, matched_rows


def test_the_permutation_interleaves_each_heads_two_rope_halves():
    rows = np.arange(16)[:, None]  # 2 heads of 8 rows: halves [0..3 | 4..7] per head
    out = llama_permute(rows, 2).ravel().tolist()
    assert out == [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]


def test_unpermute_undoes_it_for_matrices_and_biases():
    w = np.random.default_rng(0).standard_normal((24, 5))
    assert np.array_equal(llama_unpermute(llama_permute(w, 3), 3), w)
    b = np.arange(24.0)
    assert np.array_equal(llama_unpermute(llama_permute(b, 3), 3), b)


def test_rows_in_another_order_are_matched():
    a = np.random.default_rng(1).standard_normal((10, 4))
    perm = np.random.default_rng(2).permutation(10)
    found = matched_rows(a, a[perm])
    assert np.array_equal(a[perm][found], a)
    assert matched_rows(a, a) is None


def test_the_relations_offered_depend_on_the_shapes():
    a = np.zeros((4, 6))
    assert [r for r, _, _ in alternatives(a, np.zeros((6, 4)), None)] == ["transposed", "reshaped"]
    square = [r for r, _, _ in alternatives(np.zeros((8, 8)), np.ones((8, 8)), 2)]
    assert square[:3] == ["transposed", "qk_permuted", "qk_unpermuted"]
