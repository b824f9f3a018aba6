"""RecordBatch: records as columns and back, rows taken and batches joined."""

from __future__ import annotations

import numpy as np

from orchlog.read.batch import RecordBatch, ragged_take
from orchlog.read.trace import Location, TraceRecord
from orchlog.schema_gen import Stats


def _records():
    return [
        TraceRecord(
            "attn_norm",
            team="t",
            token_idx=3,
            layer=1,
            stage="mul",
            step=0,
            rank=1,
            world_size=2,
            seq=7,
            dtype="f32",
            shape=(2, 2),
            numel=4,
            values=np.array([1.0, -0.5]),
            stats=Stats(-0.5, 1.0, 0.25, 0.8, 1.0, 0, 0),
            blake3="ab" * 32,
            meta={"k": 1},
            location=Location("a.jsonl", line=3),
            loader=lambda: b"\0" * 16,
        ),
        TraceRecord("logits", values=np.array([]), location=Location("b.bin", offset=99)),
        TraceRecord("x", dtype="f16", shape=(), numel=1, values=np.array([2.0])),
    ]


def _same(r1: TraceRecord, r2: TraceRecord) -> None:
    d1, d2 = vars(r1).copy(), vars(r2).copy()
    v1, v2 = d1.pop("values"), d2.pop("values")
    np.testing.assert_array_equal(v1, v2)
    for d in (d1, d2):
        d.pop("order")
    assert d1 == d2


def test_records_survive_a_round_trip_through_columns():
    recs = _records()
    batch = RecordBatch.from_records(recs)
    assert len(batch) == 3
    for r, back in zip(recs, batch.records()):
        _same(back, r if r.location else TraceRecord(**{**vars(r), "location": Location("")}))


def test_take_and_concat_keep_ragged_columns_aligned():
    batch = RecordBatch.from_records(_records())
    picked = batch.take([2, 0])
    assert picked.checkpoint.tolist() == ["x", "attn_norm"]
    assert picked.row_values(1).tolist() == [1.0, -0.5] and picked.shape_of(0) == ()
    joined = RecordBatch.concat([picked, batch.take([1])])
    assert joined.checkpoint.tolist() == ["x", "attn_norm", "logits"]
    assert joined.row_values(2).size == 0 and joined.shape_of(1) == (2, 2) and joined.shape_of(2) is None


def test_tail_is_take_of_the_last_rows():
    batch = RecordBatch.from_records(_records() * 2)
    for start in range(len(batch) + 1):
        tail, taken = batch.tail(start), batch.take(np.arange(start, len(batch)))
        assert len(tail) == len(taken) == len(batch) - start
        for r1, r2 in zip(tail.records(), taken.records()):
            _same(r1, r2)


def test_ragged_take_gathers_variable_length_rows():
    off = np.array([0, 2, 2, 5])
    flat = np.array([10, 11, 20, 21, 22])
    new_off, items = ragged_take(off, flat, np.array([2, 1, 0, 2]))
    assert new_off.tolist() == [0, 3, 3, 5, 8]
    assert items.tolist() == [20, 21, 22, 10, 11, 20, 21, 22]


def test_data_is_at_hand_with_a_loader_or_with_every_value():
    batch = RecordBatch.from_records(_records())
    assert batch.has_data().tolist() == [True, False, True]
