"""Sides from records: whole tensors, summaries, and the sketch hook."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Pair, Side, Where
from orchlog.read.trace import TraceRecord
from orchlog.schema_gen import Stats


def _record(values, numel, loader=None, meta=None, dtype="f32", shape=None):
    stats = Stats(0.0, 1.0, 0.5, 0.6, 1.0, nan_count=0, inf_count=0)
    return TraceRecord(
        "x",
        dtype=dtype,
        shape=shape,
        numel=numel,
        values=np.asarray(values),
        stats=stats,
        loader=loader,
        meta=meta or {},
    )


def test_a_record_with_its_bytes_is_a_whole_tensor():
    arr = np.arange(6, dtype=np.float32)
    side = Side.from_record(_record(arr[:2], 6, loader=lambda: arr.tobytes(), shape=(2, 3)))
    assert side.values is not None
    shaped = side.shaped()
    assert side.full and shaped is not None and shaped.shape == (2, 3) and side.values.dtype == np.float64


def test_a_summary_keeps_its_leading_values_and_stats():
    side = Side.from_record(_record([1.0, 2.0], 100))
    assert side.stats is not None
    assert not side.full and side.size == 100 and side.stats["rms"] == 0.6 and side.shaped() is None


def test_a_record_whose_values_are_all_there_is_whole():
    assert Side.from_record(_record([1.0, 2.0, 3.0], 3)).full


def test_a_sketch_is_read_when_present_and_joins_the_linear_numbers():
    a = Side.from_record(_record([1.0, 2.0], 100, meta={"sketch": [3.0, 4.0]}))
    b = Side.from_record(_record([2.0, 4.0], 100, meta={"sketch": [6.0, 8.0]}))
    assert a.sketch is not None
    assert a.sketch.tolist() == [3.0, 4.0]
    r, o = Pair(Where("x"), a, b).linear()
    assert r.tolist() == [1.0, 2.0, 3.0, 4.0] and o.tolist() == [2.0, 4.0, 6.0, 8.0]


def test_common_values_leave_out_non_finite_places():
    p = Pair(Where("x"), Side.of(np.array([1.0, np.nan, 3.0])), Side.of(np.array([1.0, 2.0, np.inf])))
    r, o = p.common()
    assert r.tolist() == [1.0] and o.tolist() == [1.0]
    assert p.ours.nonfinite() == 1
