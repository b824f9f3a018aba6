"""Parquet batches read column by column hold what the records read row by row hold, problems included."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from orchlog import schema_gen
from orchlog.encoding.record import header_values, record_values
from orchlog.parquet import Writer, columnar, packing, read, reading
from orchlog.parquet.rows import packable
from orchlog.parquet.schema import ARROW_SCHEMA
from orchlog.read.batch import RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.records import Location, TraceRecord
from orchlog.schema_gen import Stats
from tests.tracegen import header, random_records, record, write_frames, write_jsonl


def _random_values(rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
    """random_records' rows as a Parquet writer takes them, a fifth without their tensor."""
    out = []
    for r in random_records(rng, n):
        values = record_values(r)
        if rng.random() < 0.2:
            values["data"] = None  # a summary without its tensor: row groups with and without them mix
        out.append(values)
    return out


def _write(path, rows: list[dict[str, Any]], **options) -> Any:
    with Writer(path, headers=[header_values(header())], **options) as w:
        for values in rows:
            w.append(values)
    return path


def _fields(rec) -> tuple:
    """Everything a record says, NaN compared by its bits, the tensor bytes included."""
    raw = rec.raw_bytes()
    sketch = None if rec.sketch is None else np.asarray(rec.sketch, dtype=np.float64).tobytes()
    return (
        *(getattr(rec, c.name) for c in schema_gen.COLUMNS if c.kind != "floats"),
        sketch, rec.dtype, rec.shape, rec.numel, rec.values.tobytes(), repr(rec.stats), rec.blake3, rec.meta,
        rec.location.path, None if raw is None else bytes(raw),
    )  # fmt: skip


def _by_records(path, **select) -> tuple[list[tuple], list[str]]:
    trace = read(path, **select) if select else open_trace(path)
    rows = [_fields(r) for r in trace]
    return rows, [str(d) for d in trace.diagnostics]


def _by_batches(path, tensors: bool, rows: int = 4096, **select) -> tuple[list[tuple], list[str], list]:
    trace = read(path, **select) if select else open_trace(path)
    batches = list(trace.batches(rows=rows, tensors=tensors))
    got = [_fields(b.record(i)) for b in batches for i in range(len(b))]
    return got, [str(d) for d in trace.diagnostics], batches


def _assert_alike(path, tensors: bool, **select) -> list:
    want, want_problems = _by_records(path, **select)
    got, problems, batches = _by_batches(path, tensors, **select)
    assert problems == want_problems
    assert len(got) == len(want)
    for a, b in zip(got, want):
        for x, y in zip(a, b):
            if x != y:  # NaN stats compare unequal to themselves
                assert repr(x) == repr(y)
    return batches


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tensors", [True, False], ids=["tensors", "summaries"])
def test_random_traces_read_alike_in_batches_and_in_records(tmp_path, seed, tensors):
    rng = np.random.default_rng(seed)
    path = _write(tmp_path / "t.parquet", _random_values(rng, 300), row_group_bytes=int(rng.choice([4096, 64 << 10])))
    batches = _assert_alike(path, tensors)
    in_memory = sum(int((b.data_len >= 0).sum()) for b in batches)
    behind_loaders = sum(int(b.loader.astype(bool).sum()) for b in batches)
    if tensors:
        assert in_memory > 50  # the rest: tensors off their dtype's alignment, after odd-sized ones
    else:
        assert in_memory == 0 and behind_loaders > 100


def test_tensors_aligned_in_their_row_group_come_in_memory_and_misaligned_ones_behind_loaders(tmp_path, monkeypatch):
    rows = [record_values(record(f"c{i}", np.arange(i + 1, dtype=np.float32), seq=i)) for i in range(10)]
    rows.insert(5, record_values(record("odd", np.arange(3, dtype=np.float16), seq=99)))  # 6 bytes: the rest shift
    path = _write(tmp_path / "t.parquet", rows)
    made: list[int] = []
    loader = reading._RowGroupCache.loader

    def counted(self, f, rg, row, itemsize):
        made.append(row)
        return loader(self, f, rg, row, itemsize)

    monkeypatch.setattr(reading._RowGroupCache, "loader", counted)
    (batch,) = open_trace(path).batches(tensors=True)
    assert batch.data_len is not None
    assert made == [6, 7, 8, 9, 10]  # a loader only where the bytes did not come in memory
    assert (batch.data_len >= 0).tolist() == [True] * 6 + [False] * 5
    assert batch.loader.astype(bool).tolist() == [False] * 6 + [True] * 5
    _assert_alike(path, True)


def test_a_selection_reads_alike(tmp_path):
    path = _write(tmp_path / "t.parquet", _random_values(np.random.default_rng(7), 300), row_group_bytes=8192)
    _assert_alike(path, True, layer=range(3, 20), checkpoint="Q*")


def test_orchlog_files_are_read_column_by_column(tmp_path):
    path = _write(tmp_path / "t.parquet", _random_values(np.random.default_rng(3), 50))
    table = pq.read_table(path, columns=[c for c in ARROW_SCHEMA.names if c != "data"])
    assert columnar.batch_of(table, str(path), np.arange(table.num_rows)) is not None


def _table_with(**changed: Any) -> pa.Table:
    """Three well-formed summary rows (no tensors), one column replaced."""
    rows = [record_values(record(f"c{i}", np.arange(4, dtype=np.float32), seq=i, layer=i)) for i in range(3)]
    columns = {name: [r.get(name) for r in rows] for name in ("checkpoint", "seq", "layer", "numel", "blake3")}
    columns["tensor_dtype"] = ["f32"] * 3
    columns["tensor_shape"] = [[4]] * 3
    columns.update(changed)
    return pa.table(columns)


@pytest.mark.parametrize(
    "changed",
    [
        {"layer": pa.array([0, -2, 1], pa.int32())},  # a negative key part
        {"numel": [4, -1, 4]},
        {"tensor_shape": [[4], [-4], [4]]},
        {"tensor_shape": [[4], [2**40, 2**40], [4]]},  # more than 2**63 elements
        {"tensor_shape": pa.array([[4], None, [4]], pa.list_(pa.int64()))},
        {"checkpoint": ["a", None, "c"]},
        {"blake3": ["ab" * 40, "", None]},  # longer than a hash
        {"blake3": ["é", "", None]},
        {"meta": pa.array([[("k", "[1, 2]")], [], None], pa.map_(pa.string(), pa.string()))},  # not a scalar
        {"seq": ["0", "1", "2"]},  # another writer's types
        {
            "nan_count": [0, -3, 0],
            "inf_count": [0, 0, 0],
            "tensor_min": [0.0] * 3,
            "tensor_max": [1.0] * 3,
            "tensor_mean": [0.5] * 3,
            "rms": [0.5] * 3,
            "abs_max": [1.0] * 3,
        },
    ],  # fmt: skip
    ids=lambda changed: ",".join(changed),
)
def test_rows_the_column_checks_do_not_settle_are_read_and_reported_as_records(tmp_path, changed):
    path = tmp_path / "t.parquet"
    pq.write_table(_table_with(**changed), path)
    want, want_problems = _by_records(path)
    assert want_problems or len(want) == 3  # what the record path keeps or skips, each row named
    _assert_alike(path, True)
    table = pq.read_table(path)
    assert columnar.batch_of(table, str(path), np.arange(table.num_rows)) is None


def test_defaults_fill_absent_and_null_identity_fields_alike(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(
        _table_with(
            team=pa.array(["t", None, "u"], pa.string()),
            tp_rank=pa.array([None, 1, None], pa.int32()),
            grafted=pa.array([None, True, False], pa.bool_()),
            sketch=pa.array([[0.1] * 64, None, [math.inf] * 64], pa.list_(pa.float64(), 64)),  # rounded to f32
        ),
        path,
    )
    assert (
        columnar.batch_of(pq.read_table(path), str(path), np.arange(pq.read_metadata(path).num_rows)) is not None
    )  # another writer's types: int64, `element`
    batches = _assert_alike(path, True)
    assert batches[0].team.tolist() == ["t", "", "u"] and batches[0].rank.tolist() == [0, 1, 0]
    assert batches[0].grafted.tolist() == [0, 1, 0]


def _packed(tmp_path, name: str, inputs: list, by_columns: bool, monkeypatch) -> tuple[pa.Table, list[str]]:
    with monkeypatch.context() as m:
        if not by_columns:
            m.setattr(packing, "packable", lambda batch: np.zeros(len(batch), dtype=bool))
        result = packing.pack(inputs, tmp_path / name, row_group_bytes=8192)
    return pq.read_table(tmp_path / name), [str(p) for p in result.problems]


@pytest.mark.parametrize("seed", range(3))
def test_pack_writes_the_same_rows_from_columns_as_from_records(tmp_path, seed, monkeypatch):
    rng = np.random.default_rng(seed)
    records = random_records(rng, 200)
    stream = write_frames(tmp_path / "t.bin", records)
    data = bytearray(stream.read_bytes())  # one tensor damaged: its row is packed as found, and named
    tensor = next(bytes(r.data) for r in records[77:] if r.data is not None and len(r.data) >= 64)
    data[data.index(tensor) + 1] ^= 0xFF
    stream.write_bytes(bytes(data))
    summaries = write_jsonl(tmp_path / "s.jsonl", random_records(rng, 50))  # no tensors
    lines = summaries.read_bytes().splitlines(keepends=True)  # and no seq in some: pack gives them their place
    summaries.write_bytes(
        b"".join(re.sub(rb',"seq":\d+', b"", line) if i % 2 else line for i, line in enumerate(lines))
    )
    inputs = [stream, summaries]
    fast, fast_problems = _packed(tmp_path, "fast.parquet", inputs, True, monkeypatch)
    slow, slow_problems = _packed(tmp_path, "slow.parquet", inputs, False, monkeypatch)
    assert fast_problems == slow_problems and any("blake3 mismatch" in p for p in fast_problems)
    assert fast.num_rows == slow.num_rows == 250
    for name in fast.column_names:  # NaN stats and sketches compare by their text
        assert repr(fast.column(name).to_pylist()) == repr(slow.column(name).to_pylist()), name


def test_rows_pack_cannot_write_as_they_are_go_through_the_records():
    def rec(i: int, **changed: Any) -> TraceRecord:
        base: dict[str, Any] = dict(
            checkpoint="c", dtype="f32", shape=(4,), numel=4, values=np.zeros(4), blake3="ab" * 32,
            stats=Stats(0.0, 1.0, 0.5, 0.5, 1.0, 0, 0), sketch=np.zeros(64), location=Location("x", line=i),
        )  # fmt: skip
        base.update(changed)
        return TraceRecord(**base)

    batch = RecordBatch.from_records(
        [
            rec(0),
            rec(1, stats=None),  # computed from the tensor, or refused
            rec(2, blake3=None),
            rec(3, sketch=None),
            rec(4, shape=None),
            rec(5, numel=None),
            rec(6, dtype=None),
            rec(7, layer=2**31),  # past the int32 column
            rec(8, loader=lambda: b"\0" * 16),  # a tensor behind a loader is read into the row group
        ]
    )
    assert packable(batch).tolist() == [True] + [False] * 8
