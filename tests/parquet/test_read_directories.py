"""A directory of Parquet traces (one file per rank or run, hive partitions allowed) reads as one trace."""

from __future__ import annotations

import numpy as np
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from orchlog.parquet import read
from orchlog.parquet.schema import COLUMN_OF
from orchlog.read.paths import open_trace
from tests.tracegen import header, record, tensor_of, write_frames, write_parquet


def _rank(rank: int):
    return [
        record(f"c{i}", np.full(4, 10 * rank + i, np.float32), rank=rank, world_size=2, seq=i, layer=i)
        for i in range(3)
    ]


def _hive_directory(tmp_path, name=COLUMN_OF["rank"]):
    """What pyarrow/Spark write when partitioning by rank: the rank column lives only in the path, as `name`."""
    table = pq.read_table(write_parquet(tmp_path / "all.parquet", _rank(0) + _rank(1)))
    table = table.rename_columns([name if c == COLUMN_OF["rank"] else c for c in table.column_names])
    root = tmp_path / "hive"
    ds.write_dataset(
        table,
        root,
        format="parquet",
        partitioning=ds.partitioning(table.select([name]).schema, flavor="hive"),
        existing_data_behavior="overwrite_or_ignore",
    )
    (tmp_path / "all.parquet").unlink()
    return root


def test_one_file_per_rank_reads_as_one_trace(tmp_path):
    for r in (0, 1):
        write_parquet(tmp_path / f"rank{r}.parquet", _rank(r), header(rank=r, world_size=2))
    for trace in (read(tmp_path), open_trace(tmp_path)):
        recs = list(trace)
        assert [(r.rank, r.checkpoint) for r in recs] == [
            (0, "c0"),
            (0, "c1"),
            (0, "c2"),
            (1, "c0"),
            (1, "c1"),
            (1, "c2"),
        ]
        assert [h["rank"] for h in trace.headers] == [0, 1]
    assert [tensor_of(r)[0] for r in read(tmp_path, rank=1)] == [10, 11, 12]


@pytest.mark.parametrize("name", [COLUMN_OF["rank"], "rank"], ids=["column-name", "field-name"])
def test_hive_partition_values_fill_the_fields_the_files_lack(tmp_path, name):
    root = _hive_directory(tmp_path, name)
    files = sorted(root.rglob("*.parquet"))
    assert [p.parent.name for p in files] == [f"{name}=0", f"{name}=1"]
    assert name not in pq.read_schema(files[0]).names
    for trace in (read(root), open_trace(root)):
        recs = sorted(trace, key=lambda r: (r.rank, r.seq))
        assert [r.rank for r in recs] == [0, 0, 0, 1, 1, 1]
        assert [tensor_of(r)[0] for r in recs] == [0, 1, 2, 10, 11, 12]


def test_a_partition_selection_skips_other_partitions(tmp_path):
    root = _hive_directory(tmp_path)
    recs = list(read(root, rank=1, layer=2))
    assert [(r.rank, r.layer, tensor_of(r)[0]) for r in recs] == [(1, 2, 12.0)]
    assert list(read(root, rank=5)) == []


def test_a_broken_file_in_a_directory_is_reported_and_the_rest_read(tmp_path):
    write_parquet(tmp_path / "rank0.parquet", _rank(0))
    cut = write_parquet(tmp_path / "rank1.parquet", _rank(1))
    cut.write_bytes(cut.read_bytes()[:100])  # not even the schema's piece is whole
    write_frames(tmp_path / "notes.bin", [])  # not Parquet: reported, and left to open_trace
    trace = read(tmp_path)
    assert [r.rank for r in trace] == [0, 0, 0]
    notes, broken = trace.diagnostics
    assert "notes.bin" in str(notes) and "not a Parquet file" in notes.message
    assert "rank1.parquet" in str(broken) and "not a readable Parquet file" in broken.message
