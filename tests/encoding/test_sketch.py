"""The sketch's definition: linear, exact for one changed element, blind to NaN/Inf, the same for the same values."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.encoding import sketch


def _f32(values) -> list[float]:
    return sketch.compute(np.asarray(values, dtype="<f4").tobytes(), "f32")


def test_the_sketch_of_a_sum_is_the_sum_of_the_sketches_up_to_rounding():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(5000), rng.standard_normal(5000)
    sa, sb, ssum = (sketch.sketch_f64(x) for x in (a, b, a + b))
    assert np.allclose(sa + sb, ssum, rtol=0, atol=1e-12 * np.abs(ssum).max())


def test_one_changed_element_moves_every_row_by_exactly_its_change():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(3000).astype(np.float32)
    y = x.copy()
    y[1234] += np.float32(0.5)
    d = np.asarray(_f32(y), dtype=np.float64) - np.asarray(_f32(x), dtype=np.float64)
    assert np.allclose(np.abs(d), 0.5, atol=1e-4)  # ±0.5 in every row, up to the f32 rounding of the rows
    assert np.abs(sketch.sketch_f64(y.astype(np.float64) - x)).tolist() == [0.5] * 64


def test_nan_and_inf_elements_count_as_zero():
    assert _f32([1.0, np.nan, 2.0, np.inf, -np.inf]) == _f32([1.0, 0.0, 2.0, 0.0, 0.0])


def test_an_empty_tensor_has_a_sketch_of_zeros_and_a_scalar_is_its_one_element():
    assert _f32([]) == [0.0] * 64
    assert [abs(v) for v in _f32([3.25])] == [3.25] * 64


def test_rows_are_f32_and_a_zero_is_positive():
    rows = _f32(np.linspace(-3, 5, 700))
    assert all(np.float32(v) == v for v in rows)
    zero = _f32([0.0, -0.0])
    assert all(np.copysign(1.0, v) == 1.0 for v in zero)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f64", "i8", "u8", "i32", "i64"])
def test_the_same_values_in_any_dtype_give_the_same_sketch(dtype):
    values = np.arange(-40, 121, 7)  # exact in every dtype, bf16 and i8 included
    if dtype == "u8":
        values = values[values >= 0]
    ref = _f32(values)
    if dtype == "bf16":
        data = (np.asarray(values, dtype="<f4").view("<u4") >> 16).astype("<u2").tobytes()
    else:
        data = np.asarray(
            values, dtype={"f16": "<f2", "f64": "<f8", "i8": "i1", "u8": "u1", "i32": "<i4", "i64": "<i8"}[dtype]
        ).tobytes()
    assert sketch.compute(data, dtype) == ref


def test_the_permutation_tables_are_permutations():
    for table in (sketch.ROW_TABLE, sketch.LANE_ROWS):
        assert (np.sort(table, axis=1) == np.arange(64)).all()
    assert len({tuple(p) for p in sketch.ROW_TABLE}) == sketch.TABLE


def test_the_estimator_band_is_chi_square_64s_at_one_in_a_million():
    lo, hi = sketch.ESTIMATE_BAND
    assert (round(lo, 4), round(hi, 4)) == (0.3589, 2.1142)
    assert sketch.chi2_cdf(lo * 64) == pytest.approx(5e-7, rel=1e-6)
    assert sketch.chi2_sf(hi * 64) == pytest.approx(5e-7, rel=1e-6)
