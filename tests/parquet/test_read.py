"""Reading Parquet traces: records found by content, tensors read lazily, zero-copy where aligned."""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from orchlog.errors import OrchlogError
from orchlog.parquet import read
from orchlog.read.paths import open_trace
from tests.tracegen import record, tensor_of, write_parquet


def _bytes_read_by_this_process() -> int:
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


def test_a_tensor_is_a_read_only_view_of_arrow_memory_when_aligned(tmp_path):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (rec,) = list(read(write_parquet(tmp_path / "t.parquet", [record("a", x)])))
    first, second = tensor_of(rec), tensor_of(rec)
    np.testing.assert_array_equal(first, x)
    assert not first.flags.writeable
    assert first.__array_interface__["data"][0] == second.__array_interface__["data"][0], "no copy per call"


def test_misaligned_tensors_are_copied_to_aligned_memory(tmp_path):
    odd = record("odd", np.arange(3, dtype=np.float16))  # 6 bytes: the next tensor starts off a 4-byte boundary
    rec_odd, rec_f32 = list(read(write_parquet(tmp_path / "t.parquet", [odd, record("f", np.ones(5, np.float32))])))
    arr = tensor_of(rec_f32)
    assert arr.flags.aligned and arr.tolist() == [1.0] * 5
    assert tensor_of(rec_odd).tolist() == [0.0, 1.0, 2.0]


def test_summaries_read_without_touching_tensor_bytes(tmp_path):
    rng = np.random.default_rng(0)
    big = [record(f"c{i}", rng.standard_normal(256 * 1024).astype(np.float32), seq=i) for i in range(16)]  # 1 MiB
    path = write_parquet(tmp_path / "t.parquet", big, row_group_bytes=2 << 20)
    before = _bytes_read_by_this_process()
    recs = list(read(path))
    scanned = _bytes_read_by_this_process() - before
    assert len(recs) == 16 and all(r.has_data for r in recs)
    assert scanned < path.stat().st_size / 20, f"a scan read {scanned} bytes of {path.stat().st_size}"


def test_one_tensor_costs_one_row_group_not_the_file(tmp_path):
    big = [record("x", np.full(256 * 1024, i, np.float32), seq=i, layer=i) for i in range(32)]  # 1 MiB each
    path = write_parquet(tmp_path / "t.parquet", big, row_group_bytes=2 << 20, codec="none")
    before = _bytes_read_by_this_process()
    (rec,) = list(read(path, layer=20))
    assert tensor_of(rec)[0] == 20
    time.sleep(0.3)  # a read-ahead of a row group the selection skips would have finished by now
    used = _bytes_read_by_this_process() - before
    assert used < 3 * (1 << 20), f"read {used} bytes for one 1 MiB tensor of a {path.stat().st_size}-byte file"


def test_records_of_one_row_group_share_one_read(tmp_path):
    rng = np.random.default_rng(0)  # tensors that do not compress: the row group is 32 KiB on disk
    tensors = [record(f"c{i}", rng.standard_normal(1024).astype(np.float32)) for i in range(8)]
    path = write_parquet(tmp_path / "t.parquet", tensors)
    recs = list(read(path))
    before = _bytes_read_by_this_process()
    recs[0].tensor()
    middle = _bytes_read_by_this_process()
    for rec in recs[1:]:
        rec.tensor()
    rest = _bytes_read_by_this_process() - middle
    assert middle - before > 4 * 1024 and rest < 1024, "only /proc/self/io itself is read again"


def test_rows_without_tensor_bytes_have_no_data_even_in_a_mixed_row_group(tmp_path):
    table = pa.table(
        {
            "checkpoint": ["a", "b"],
            "dtype": ["f32", "f32"],
            "shape": [[1], [1]],
            "numel": [1, 1],
            "blake3": ["x" * 64, "y" * 64],
            "data": pa.array([None, np.float32(3).tobytes()], pa.large_binary()),
        }
    )
    pq.write_table(table, tmp_path / "mixed.parquet")
    a, b = list(read(tmp_path / "mixed.parquet"))
    assert not a.has_data and a.tensor() is None
    assert b.has_data and tensor_of(b).tolist() == [3.0]
    assert (b.rank, b.world_size, b.team, b.stats, b.meta) == (0, 1, "", None, {})


def test_which_rows_have_tensors_is_read_bit_by_bit_across_many_rows(tmp_path):
    present = [i % 3 != 0 and i != 10 for i in range(21)]  # the validity bitmap spans three bytes
    table = pa.table(
        {
            "checkpoint": [f"c{i}" for i in range(21)],
            "dtype": ["f32"] * 21,
            "shape": [[1]] * 21,
            "numel": [1] * 21,
            "blake3": ["x" * 64] * 21,
            "data": pa.array(
                [np.float32(i).tobytes() if p else None for i, p in enumerate(present)], pa.large_binary()
            ),
        }
    )
    pq.write_table(table, tmp_path / "mixed.parquet")
    recs = list(read(tmp_path / "mixed.parquet"))
    assert [r.has_data for r in recs] == present
    assert [None if (t := r.tensor()) is None else t.tolist() for r in recs] == [
        [float(i)] if p else None for i, p in enumerate(present)
    ]


def test_a_file_from_another_writer_cut_before_its_footer_is_a_clear_error(tmp_path):
    pq.write_table(pa.table({"checkpoint": ["a"] * 64}), tmp_path / "t.parquet")
    path = tmp_path / "t.parquet"
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(OrchlogError, match="not a readable Parquet file.*no footer"):
        read(path)


def test_a_file_of_orchlogs_writer_cut_before_its_footer_reads_its_whole_row_groups(tmp_path):
    records = [record(f"c{i}", np.full(64, i, np.float32), seq=i) for i in range(12)]
    path = write_parquet(tmp_path / "t.parquet", records, row_group_bytes=700)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    trace = read(path)
    recs = list(trace)
    assert 0 < len(recs) < 12 and [r.seq for r in recs] == list(range(len(recs)))
    assert all(r.seq is not None and tensor_of(r).tolist() == [float(r.seq)] * 64 for r in recs)
    [note] = trace.diagnostics
    assert "no footer" in note.message and "row groups written whole" in note.message


def test_a_parquet_file_that_is_not_a_trace_says_so(tmp_path):
    pq.write_table(pa.table({"x": [1, 2]}), tmp_path / "other.parquet")
    with pytest.raises(OrchlogError, match="not an orchlog trace .*checkpoint"):
        open_trace(tmp_path / "other.parquet")


def test_a_file_from_a_newer_schema_is_read_with_a_warning(tmp_path):
    table = pq.read_table(write_parquet(tmp_path / "t.parquet", [record("a", np.ones(2, np.float32))]))
    newer = table.append_column("future_field", pa.array([1])).replace_schema_metadata(
        {**table.schema.metadata, b"orchlog.schema_version": b"99"}
    )
    pq.write_table(newer, tmp_path / "new.parquet")
    trace = read(tmp_path / "new.parquet")
    assert [r.checkpoint for r in trace] == ["a"]
    assert "schema 99" in trace.diagnostics[0].message
