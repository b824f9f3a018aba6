"""orchlog.encoding.dtypes: tensor bytes to values."""

from __future__ import annotations

import numpy as np

from orchlog.encoding import dtypes


def test_a_signalling_nan_widens_to_nan_without_a_numpy_warning(recwarn):
    """A tensor may hold a signalling NaN (a payload kept from the engine, or damage); widening it for the
    stats quiets it, which NumPy would otherwise report on stderr as 'invalid value encountered in cast'."""
    raw = np.array([0x7F800001, 0x3F800000, 0xFFA00000], dtype="<u4").tobytes()  # sNaN, 1.0, negative sNaN
    out = dtypes.to_f64(dtypes.from_bytes(raw, "f32"), "f32")
    assert out.dtype == np.float64 and np.isnan(out[[0, 2]]).all() and out[1] == 1.0
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
