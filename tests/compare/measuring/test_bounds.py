"""The intervals partial evidence proves hold the true metrics, for random pairs of every kind of difference."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from orchlog.compare.measuring import bounds
from orchlog.compare.measuring.metrics import measure
from orchlog.encoding import sketch
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord
from orchlog.schema_gen import Stats
from orchlog.strings import glob_matcher

CHECKED = ("max_abs", "mean_abs", "p99_abs", "rms_diff", "l2", "cosine", "max_rel")


def _truth(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """The metrics of two f32 tensors, in f64 throughout."""
    x, y = a.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64)
    d = np.abs(x - y)
    na, nb, nd = np.sum(x * x), np.sum(y * y), np.sum(d * d)
    cos = (na + nb - nd) / (2 * math.sqrt(na) * math.sqrt(nb)) if na and nb else math.nan
    return {
        "max_abs": d.max(),
        "mean_abs": d.mean(),
        "p99_abs": float(np.quantile(d, 0.99, method="inverted_cdf")),
        "rms_diff": math.sqrt(nd / d.size),
        "l2": math.sqrt(nd),
        "cosine": cos,
        "max_rel": float((d / np.maximum(np.abs(x), 1e-8)).max()),
    }


def _stats(x: np.ndarray) -> Stats:
    from orchlog.encoding.stats import compute

    return compute(x.astype(np.float32).tobytes(), "f32")


def _summary(x: np.ndarray, values: int) -> TraceRecord:
    x = x.astype(np.float32)
    return TraceRecord(
        "h",
        dtype="f32",
        shape=x.shape,
        numel=x.size,
        values=x[:values].astype(np.float64),
        stats=_stats(x),
        blake3=hashlib.blake2b(x.tobytes(), digest_size=32).hexdigest(),  # equal only for equal bytes
    )


def _pairs(rng: np.random.Generator, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for k in range(count):
        n = int(rng.choice([1, 7, 64, 513, 896, 3000]))
        a = rng.standard_normal(n) * rng.choice([1e-3, 1.0, 50.0])
        kind = k % 5
        d = np.zeros(n)
        if kind == 0:
            d = rng.standard_normal(n) * rng.choice([1e-7, 1e-3, 1.0])
        elif kind == 1:
            d[rng.integers(n)] = rng.choice([1e-4, 0.5, 30.0])
        elif kind == 2:
            d[-rng.integers(1, n + 1) :] = 0.02
        elif kind == 3:
            d = a[rng.permutation(n)] - a
        else:
            start = rng.integers(n)
            d[start : start + 64] = a[start : start + 64] * 0.03
        out.append((a, a + d))
    return out


def _measured(pairs, with_sketch: bool, values: int = 10):
    ra = RecordBatch.from_records([_summary(a, values) for a, _ in pairs])
    rb = RecordBatch.from_records([_summary(b, values) for _, b in pairs])
    if with_sketch:
        ra.sketch = np.array([sketch.compute(a.astype(np.float32).tobytes(), "f32") for a, _ in pairs])
        rb.sketch = np.array([sketch.compute(b.astype(np.float32).tobytes(), "f32") for _, b in pairs])
    idx = np.arange(len(pairs))
    return measure(ra, rb, idx, idx, glob_matcher(()))


@pytest.mark.parametrize("with_sketch", [False, True])
def test_every_interval_holds_the_metric_measured_on_the_whole_tensors(with_sketch):
    pairs = _pairs(np.random.default_rng(3), 400)
    t = _measured(pairs, with_sketch)
    for p, (a, b) in enumerate(pairs):
        if t.basis[p] == 0:
            continue  # every value inline: measured on the tensors themselves (in f32 for f32 tensors)
        truth = _truth(a, b)
        for m in CHECKED:
            value = truth[m]
            if math.isnan(value):
                continue
            lo, hi = t.lo[m][p], t.hi[m][p]
            slack = 1e-12 * max(1.0, abs(value))
            assert lo - slack <= value <= hi + slack, (p, m, lo, value, hi)
    if with_sketch:  # every pair not settled by its inline values or equal hashes went by the sketch
        assert set(t.basis.tolist()) == {0, 1, 2} and (t.basis == 2).sum() > len(pairs) / 2


def test_the_sketch_narrows_l2_to_the_estimators_band():
    pairs = _pairs(np.random.default_rng(4), 200)
    plain, sketched = _measured(pairs, False), _measured(pairs, True)
    band_lo, band_hi = sketch.ESTIMATE_BAND
    ratio = math.sqrt(band_hi / band_lo)  # about 2.43: hi / lo of ‖a − b‖ from the sketch alone
    clear = (sketched.basis == 2) & (sketched.lo["l2"] > 0)
    width = sketched.hi["l2"][clear] / sketched.lo["l2"][clear]
    # The rounding of the stored f32 rows widens it a little where the difference is small beside the tensors.
    assert clear.sum() > 100 and np.median(width) <= ratio * 1.01 and np.quantile(width, 0.9) <= ratio * 1.1
    assert np.all(sketched.hi["l2"] <= plain.hi["l2"]) and np.all(sketched.lo["l2"] >= plain.lo["l2"])


def test_with_no_finite_counts_or_sizes_known_only_the_leading_values_bound_from_below():
    st = Stats(0.0, 1.0, 0.5, 0.6, 1.0, 1, 0)  # one NaN somewhere: positions unknown
    ra = RecordBatch.from_records([TraceRecord("h", numel=100, values=np.array([0.0, 1.0]), stats=st, blake3="a" * 64)])
    rb = RecordBatch.from_records([TraceRecord("h", numel=100, values=np.array([0.0, 1.5]), stats=st, blake3="b" * 64)])
    ra.sketch = rb.sketch = np.zeros((1, 64))  # equal sketches prove nothing when NaN hides where it sits
    t = measure(ra, rb, np.array([0]), np.array([0]), glob_matcher(()))
    assert t.lo["max_abs"][0] == 0.5 and math.isinf(t.hi["max_abs"][0]) and t.basis[0] == 3


def test_one_side_all_zero_makes_the_difference_the_other_side_exactly():
    a, b = np.zeros(50), np.linspace(-2, 1, 50)
    t = _measured([(a, b)], False)
    assert t.lo["max_abs"][0] == t.hi["max_abs"][0] == 2.0
    assert t.lo["l2"][0] == pytest.approx(np.linalg.norm(b.astype(np.float32).astype(np.float64)), rel=1e-12)
    assert t.lo["cosine"][0] == t.hi["cosine"][0] == 0.0


def test_unknown_is_the_whole_range():
    u = bounds.unknown(2)
    assert u.lo["cosine"].tolist() == [-1, -1] and np.isinf(u.hi["l2"]).all() and not u.sketched.any()


def test_sketches_of_another_width_prove_nothing():
    # The estimator's band holds for the schema's 64 rows; a column of any other width (a reader's or a
    # writer's mistake) is no evidence, never a narrower interval.
    pairs = _pairs(np.random.default_rng(6), 30)
    t = _measured(pairs, True)
    ra = RecordBatch.from_records([_summary(a, 10) for a, _ in pairs])
    rb = RecordBatch.from_records([_summary(b, 10) for _, b in pairs])
    ra.sketch, rb.sketch = np.zeros((len(pairs), 32)), np.ones((len(pairs), 32))
    idx = np.arange(len(pairs))
    assert bounds.sketch_sums(ra, idx, rb, idx) is None
    narrow = measure(ra, rb, idx, idx, glob_matcher(()))
    assert not (narrow.basis == 2).any() and (t.basis == 2).any()


def test_object_and_array_sketch_columns_give_the_same_sums():
    pairs = _pairs(np.random.default_rng(7), 20)
    rows = [sketch.compute(a.astype(np.float32).tobytes(), "f32") for a, _ in pairs]
    ra = RecordBatch.from_records([_summary(a, 10) for a, _ in pairs])
    rb = RecordBatch.from_records([_summary(b, 10) for _, b in pairs])
    ra.sketch = np.array(rows)
    rb.sketch = np.array([sketch.compute(b.astype(np.float32).tobytes(), "f32") for _, b in pairs])
    idx = np.arange(len(pairs))[::-1].copy()
    want = bounds.sketch_sums(ra, idx, rb, idx)
    as_objects = np.empty(len(rows), dtype=object)
    as_objects[:] = [list(r) for r in rows]
    as_objects[3] = None  # a record without a sketch
    ra.sketch = as_objects
    got = bounds.sketch_sums(ra, idx, rb, idx)
    assert got is not None and want is not None
    keep = idx != 3
    np.testing.assert_array_equal(got[keep], want[keep])
    assert np.isnan(got[~keep]).all()
