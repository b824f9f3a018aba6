"""Whole-tensor metrics agree with their textbook formulas, NaN and Inf included."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchlog import kernels
from orchlog.compare.measuring.tensor_metrics import cosine_from_sums, tensor_diff


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_metrics_match_the_plain_formulas(dtype):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(10_000).astype(dtype)
    b = (a + rng.standard_normal(a.size) * 1e-3).astype(dtype)
    d = tensor_diff(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    diff = np.abs(a64 - b64)
    assert d.n == a.size
    assert d.max_abs == pytest.approx(diff.max(), rel=1e-6)
    assert d.mean_abs == pytest.approx(diff.mean(), rel=1e-5)
    assert d.max_rel == pytest.approx((diff / np.maximum(np.abs(a64), 1e-8)).max(), rel=1e-5)
    assert d.rms_a == pytest.approx(np.sqrt(np.mean(a64**2)), rel=1e-6)
    assert d.rms_diff == pytest.approx(np.sqrt(np.mean(diff**2)), rel=1e-5)
    assert d.l2 == pytest.approx(np.linalg.norm(a64 - b64), rel=1e-5)
    cos = a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64))
    assert 1 - d.cosine == pytest.approx(1 - cos, rel=1e-3)
    assert d.p99_abs == np.percentile(np.abs(a - b), 99, method="inverted_cdf")
    assert (d.min_a, d.max_b) == (a.min(), b.max())


def test_cosine_keeps_its_digits_when_the_vectors_are_nearly_equal():
    a = np.ones(1000)
    b = a + 1e-6 * np.sin(np.arange(1000))
    exact = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    d = b - a
    assert 1 - cosine_from_sums(float(a @ a), float(b @ b), float(d @ d)) == pytest.approx(1 - exact, rel=1e-3)
    assert cosine_from_sums(0.0, 0.0, 0.0) == 1.0 and cosine_from_sums(0.0, 1.0, 1.0) == 0.0


def _identical_tensors(count: int) -> list[np.ndarray]:
    """f32 and f64 tensors of 1 to 5,000 elements, at magnitudes from 1e-20 to 1e20."""
    rng = np.random.default_rng(11)
    return [
        (rng.standard_normal(int(rng.integers(1, 5000))) * 10 ** rng.uniform(-20, 20)).astype(
            np.float32 if i % 2 else np.float64
        )
        for i in range(count)
    ]


def test_identical_tensors_read_a_cosine_of_exactly_1_on_every_path():
    # With the norms' product taken as sqrt(|a|²)·sqrt(|b|²), 496 of 2,000 such tensors read
    # 0.9999999999999999, and which ones depended on the machine's vector width (the order of the sums).
    tensors = _identical_tensors(400)
    assert all(tensor_diff(a, a.copy()).cosine == 1.0 for a in tensors)
    assert all(cosine_from_sums(x, x, 0.0) == 1.0 for x in np.random.default_rng(2).uniform(1e-300, 1e300, 1000))
    cosine = kernels.PREFIX_COLUMNS.index("cosine")
    values = np.concatenate(tensors).astype(np.float64)
    offsets = np.concatenate([[0], np.cumsum([a.size for a in tensors])])
    rows = np.arange(len(tensors))
    for native in (True, False):
        out = kernels.prefix_diffs(values, offsets, rows, values.copy(), offsets, rows, native=native)
        assert (out[:, cosine] == 1.0).all(), native
    if kernels.NATIVE:
        bufs = [np.frombuffer(a.tobytes(), dtype=np.uint8) for a in tensors]
        codes = np.array([kernels.ELEMENT_CODES["f32" if a.dtype == np.float32 else "f64"] for a in tensors])
        sizes, starts = np.array([a.size for a in tensors]), np.zeros(len(tensors))
        measured = kernels.tensor_diffs(bufs, starts, sizes, codes, bufs, starts, sizes, codes)
        assert measured is not None
        rows, flagged = measured  # flagged: f32 squares beyond f32's range, left to tensor_diff's f64 path
        assert (rows[~flagged, cosine] == 1.0).all() and (~flagged).sum() > 300


def test_matching_nan_and_inf_agree_and_mismatched_ones_make_max_abs_infinite():
    a = np.array([1.0, np.nan, np.inf, 2.0], dtype=np.float32)
    same = tensor_diff(a, a.copy())
    assert same.max_abs == 0 and same.nonfinite_mismatch == 0 and same.n == 4
    b = np.array([1.5, 0.0, np.inf, np.nan], dtype=np.float32)
    d = tensor_diff(a, b)
    assert d.nonfinite_mismatch == 2 and d.max_abs == math.inf
    assert d.mean_abs == pytest.approx(0.5)  # over the positions where both are finite: only the first


def test_different_sizes_compare_the_common_prefix():
    d = tensor_diff(np.arange(5, dtype=np.float32), np.arange(3, dtype=np.float32) + 2)
    assert d.n == 3 and d.max_abs == 2.0


def test_finite_values_whose_squares_overflow_are_still_measured_exactly():
    a = np.array([3e30, -1.0, 2.0], dtype=np.float32)
    b = np.array([3e30, -1.0, 2.5], dtype=np.float32)
    d = tensor_diff(a, b)
    assert d.max_abs == 0.5 and d.nonfinite_mismatch == 0 and d.min_a == -1.0
    assert d.rms_a == pytest.approx(np.sqrt((3e30**2 + 1 + 4) / 3), rel=1e-6)
