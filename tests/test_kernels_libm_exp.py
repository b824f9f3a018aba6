"""kernels.exp: the C library's exp of every element (Python's math.exp), natively and in its twin, so that
what is computed from it (a KL divergence) has the same bits on every machine; NumPy's own f64 exp, which it
runs where the CPU has AVX-512, differs from it in the last bit of some elements."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchlog import kernels
from orchlog.compare.measuring.logits import kl_divergence, log_softmax

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="orchlog._kernels is not built")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 709.78, 709.79, 1e308, -745.1, -746.0, -1e308, math.inf, -math.inf, math.nan]


def _math_exp(values: np.ndarray) -> np.ndarray:
    out = []
    for v in values.ravel().tolist():
        try:
            out.append(math.exp(v))
        except OverflowError:
            out.append(math.inf)
    return np.array(out, dtype=np.float64).reshape(values.shape)


def _assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == np.float64 and got.shape == want.shape
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    assert (got[~nan].view(np.uint64) == want[~nan].view(np.uint64)).all()


@pytest.mark.parametrize("native", [True, False])
def test_every_element_is_math_exp_bit_for_bit(native):
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(20_000) * 30, -rng.exponential(50, 20_000), SPECIAL])
    _assert_same_bits(kernels.exp(values, native=native), _math_exp(values))


@pytest.mark.parametrize("native", [True, False])
def test_any_shape_and_float_type_is_taken_as_f64(native):
    values = np.arange(-12, 12, dtype=np.float32).reshape(2, 3, 4) / np.float32(3)
    got = kernels.exp(values, native=native)
    _assert_same_bits(got, _math_exp(values.astype(np.float64)))
    assert kernels.exp(np.zeros(0), native=native).shape == (0,)


def _kl_from_math(a: np.ndarray, b: np.ndarray) -> float:
    """The KL as logits.py computes it (NumPy's sums), of math.exp and math.log: what every machine computes."""
    lp, lq = (s - math.log(float(np.sum(_math_exp(s)))) for s in (a - np.max(a), b - np.max(b)))
    return float(max(0.0, np.sum(_math_exp(lp) * (lp - lq))))


def test_a_kl_divergence_is_made_of_the_c_librarys_exp_and_log():
    """Small vocabularies, where one element's last bit reaches the result (NumPy's own exp on an AVX-512
    machine gave another KL for about one pair in ten), and a large one."""
    rng = np.random.default_rng(2)
    pairs = [(a, a + rng.standard_normal(16) * 0.5) for a in rng.standard_normal((200, 16)) * 4]
    big = rng.standard_normal(50_000) * 4
    pairs.append((big, big + rng.standard_normal(50_000) * 0.3))
    for a, b in pairs:
        assert kl_divergence(a, b) == _kl_from_math(a, b)
    shifted = big - np.max(big)
    _assert_same_bits(log_softmax(big), shifted - math.log(float(np.sum(_math_exp(shifted)))))
