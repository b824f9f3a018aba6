"""The diagnosis's median and quantile: np.median's and np.quantile's values bit for bit (f32 and f64,
odd and even counts, ties, NaN), without the import of numpy.ma that NumPy's own make."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from orchlog.diagnose.stats import median, quantile


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_same_values_as_numpy(dtype):
    rng = np.random.default_rng(7)
    for trial in range(400):
        x = (rng.standard_normal(int(rng.integers(1, 80))) * 10 ** rng.uniform(-6, 6)).astype(dtype)
        if trial % 5 == 0:
            x = np.round(x)  # ties
        shaped = x.reshape(-1, 1) if trial % 3 == 0 else x
        assert median(shaped) == float(np.median(x))
        for q in (0.0, 0.01, 0.5, 0.9, 0.999, 1.0):
            assert quantile(shaped, q) == float(np.quantile(x, q)), (trial, q)


def test_a_nan_gives_nan_as_numpy_does():
    x = np.array([1.0, np.nan, 3.0])
    assert np.isnan(median(x)) and np.isnan(quantile(x, 0.999)) and np.isnan(float(np.median(x)))


def test_numpy_ma_is_not_imported():
    code = (
        "import sys, numpy as np\n"
        "from orchlog.diagnose.stats import median, quantile\n"
        "median(np.arange(9.0)); quantile(np.arange(9.0), 0.999)\n"
        "assert 'numpy.ma' not in sys.modules\n"
        "np.median(np.arange(9.0)); assert 'numpy.ma' in sys.modules  # what the helpers save\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
