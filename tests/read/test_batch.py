"""RecordBatch: records as columns and back, rows taken and batches joined."""

from __future__ import annotations

import pickle

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


def _edge_records():
    """Bools, shards, a sketch, stats partly unsaid: what the first records leave out."""
    return [
        *_records()[:2],
        TraceRecord(
            "mlp_out",
            layer=0,
            shard_axis=1,
            shard_index=0,
            num_shards=2,
            shard_partial=True,
            grafted=False,
            numel=8,
            values=np.array([0.5]),
            stats=Stats(None, 2.0, None, 1.5, 2.0, 3, 0),  # some stats unsaid, the counts said
            sketch=np.linspace(-1.0, 1.0, 64, dtype=np.float32).astype(np.float64),  # f32 rows, as readers give
        ),
        TraceRecord(
            "y", values=np.array([1.0]), sketch=np.r_[1.0, np.full(63, np.nan)], location=Location("p.parquet", row=41)
        ),  # a NaN past the first; a Parquet row's location
    ]


def _same(r1: TraceRecord, r2: TraceRecord) -> None:
    d1, d2 = vars(r1).copy(), vars(r2).copy()
    for arrays in ("values", "sketch"):
        v1, v2 = d1.pop(arrays), d2.pop(arrays)
        assert (v1 is None) == (v2 is None)
        if v1 is not None:
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


def test_a_row_gives_back_python_numbers_and_none_where_unsaid():
    recs = _edge_records()
    rows = list(RecordBatch.from_records(recs).records())
    for r, back in zip(recs[2:], rows[2:]):
        _same(back, TraceRecord(**{**vars(r), "location": r.location or Location("")}))
    assert rows[3].location == Location("p.parquet", row=41)
    assert type(rows[0].layer) is int and type(rows[0].seq) is int and rows[0].shard_partial is None
    assert rows[2].shard_partial is True and rows[2].grafted is False and type(rows[2].shard_axis) is int
    assert rows[1].stats is None and rows[1].sketch is None and rows[1].layer is None
    stats = rows[2].stats
    assert stats is not None and stats.min is None and type(stats.max) is float and type(stats.nan_count) is int
    assert rows[3].sketch is not None and rows[3].sketch[0] == 1.0 and np.isnan(rows[3].sketch[1:]).all()


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


def test_a_signalling_nan_in_an_f32_column_reads_as_nan_without_a_warning(recwarn):
    """A damaged binary trace can hold an f32 signalling NaN (here in a sketch row); the cast to a record's
    f64 quiets it, which NumPy would report on stderr as 'invalid value encountered in cast'."""
    batch = RecordBatch.from_records(_edge_records())
    assert batch.sketch.dtype == np.float32
    batch.sketch[2, 5] = np.array([0x7F800001], dtype=np.uint32).view(np.float32)[0]
    sketch = batch.record(2).sketch
    assert sketch is not None and np.isnan(sketch[5]) and sketch[4] == batch.sketch[2, 4]
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_records_floats_are_its_own_and_the_f64_column_made_for_them_stays_out_of_a_pickle():
    recs = _edge_records()
    recs[0].loader = None  # a lambda: not picklable, and not what this test is about
    batch = RecordBatch.from_records(recs)
    first = batch.record(2).sketch
    assert first is not None
    first[:] = 7.0
    again = batch.record(2).sketch
    assert again is not None and again[0] == -1.0 and batch.sketch[2, 0] == -1.0
    copy = pickle.loads(pickle.dumps(batch))
    assert "_floats_f64" in vars(batch) and "_floats_f64" not in vars(copy)
    np.testing.assert_array_equal(copy.record(2).sketch, again)
