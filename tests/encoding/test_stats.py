"""Whole-tensor stats: finite-only, fixed lane order, nulls and +0."""

from __future__ import annotations

import math

import numpy as np

from orchlog.encoding.stats import compute


def test_stats_agree_with_numpy_on_ordinary_data():
    x = np.random.default_rng(1).standard_normal(10_001).astype(np.float32)
    s = compute(x.tobytes(), "f32")
    x64 = x.astype(np.float64)
    assert s.min == x64.min() and s.max == x64.max() and s.abs_max == np.abs(x64).max()
    assert s.mean is not None and s.rms is not None
    assert math.isclose(s.mean, x64.mean(), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(s.rms, math.sqrt((x64 * x64).mean()), rel_tol=1e-12)
    assert (s.nan_count, s.inf_count) == (0, 0)


def test_non_finite_elements_are_counted_not_summed():
    x = np.array([1.0, np.nan, 3.0, np.inf, -np.inf], dtype=np.float32)
    s = compute(x.tobytes(), "f32")
    assert (s.min, s.max, s.mean, s.nan_count, s.inf_count) == (1.0, 3.0, 2.0, 1, 2)


def test_no_finite_element_gives_null_stats():
    s = compute(np.array([np.nan], dtype=np.float32).tobytes(), "f32")
    assert (s.min, s.max, s.mean, s.rms, s.abs_max, s.nan_count) == (None, None, None, None, None, 1)
    assert compute(b"", "f16").mean is None


def test_zero_results_are_positive_zero():
    s = compute(np.array([-0.0, -0.0], dtype=np.float64).tobytes(), "f64")
    assert all(v is not None and math.copysign(1.0, v) > 0 for v in (s.min, s.max, s.mean, s.rms, s.abs_max))


def test_lane_order_is_part_of_the_result():
    # A naive left-to-right sum computes 1e16 + 1 first and loses the 1 (the ulp
    # of 1e16 is 2), so its mean is 0. In lanes, 1e16 and -1e16 cancel in lane 0
    # and the 1 survives alone in lane 1.
    x = np.zeros(16)
    x[0], x[8], x[1] = 1e16, -1e16, 1.0
    assert compute(x.tobytes(), "f64").mean == 1.0 / 16


def test_bf16_and_integer_dtypes_widen_exactly():
    bf16 = np.array([0x3F80, 0xC000], dtype="<u2").tobytes()  # 1.0, -2.0
    assert compute(bf16, "bf16").mean == -0.5
    assert compute(np.array([-128, 127], dtype="i1").tobytes(), "i8").abs_max == 128.0
