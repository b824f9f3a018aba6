"""Files of other Parquet layouts: the first (every column named after its field, dtype names such as `f32`)
reads as it did; a newer one reads with a note.

`data/layout1.parquet` was written by orchlog 0.1.0's `orchlog.parquet.Writer`
before the columns were renamed (SOURCE_DATE_EPOCH=0):

    with Writer("layout1.parquet", team="layout-1", world_size=2) as w:
        for i, dtype in enumerate(schema_gen.DTYPES):
            w.log(f"t_{dtype}", _tensor(dtype), dtype=dtype, token_idx=i, layer=i % 3, rank=i % 2, meta={"n": i})
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from orchlog import schema_gen
from orchlog.parquet import read
from orchlog.parquet.schema import COLUMN_OF
from orchlog.read.paths import open_trace
from tests.tracegen import raw_of, record, tensor_of, write_parquet

LAYOUT1 = Path(__file__).parent / "data" / "layout1.parquet"
DTYPES = ("f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64")  # schema_gen.DTYPES when the file was written


def _tensor(dtype: str) -> np.ndarray:
    base = np.arange(-3, 5, dtype=np.float32) * 1.5
    if dtype == "bf16":
        return (base.view(np.uint32) >> 16).astype(np.uint16).reshape(2, 4)
    return base.astype(schema_gen.DTYPE_NUMPY[dtype]).reshape(2, 4)


def test_the_file_has_the_old_names_and_no_layout_key():
    names = pq.read_schema(LAYOUT1).names
    assert {"rank", "dtype", "shape", "values", "min"} <= set(names)
    assert not {c for f, c in COLUMN_OF.items() if c != f} & set(names)
    assert schema_gen.PARQUET_LAYOUT_KEY.encode() not in pq.ParquetFile(LAYOUT1).metadata.metadata


def test_every_record_reads_with_its_fields_and_tensor():
    for trace in (read(LAYOUT1), open_trace(LAYOUT1)):
        recs = list(trace)
        assert [r.dtype for r in recs] == list(DTYPES) and not trace.diagnostics
        for i, (rec, dtype) in enumerate(zip(recs, DTYPES)):
            assert (rec.checkpoint, rec.token_idx, rec.layer, rec.rank, rec.seq) == (f"t_{dtype}", i, i % 3, i % 2, i)
            assert rec.shape == (2, 4) and rec.numel == 8 and rec.meta == {"n": i}
            assert bytes(raw_of(rec)) == _tensor(dtype).tobytes()
            assert rec.values is not None
            assert rec.values.tolist() == tensor_of(rec).reshape(-1).astype(np.float64).tolist()
            assert rec.stats is not None
            assert rec.stats.min == float(tensor_of(rec).min()) and rec.stats.max == float(tensor_of(rec).max())


def test_selections_on_renamed_fields_are_pushed_down_to_the_old_columns():
    assert [r.dtype for r in read(LAYOUT1, rank=1)] == ["f16", "f64", "u8", "i64"]
    assert [r.dtype for r in read(LAYOUT1, where="rank=0,layer=0-1")] == ["f32", "i8", "i32"]
    own = ds.field("numel") == 8
    assert len(list(read(LAYOUT1, filter=own, rank=0))) == 4, "a caller's expression on an unrenamed column"


def test_a_file_of_a_newer_layout_is_read_with_a_note(tmp_path):
    table = pq.read_table(write_parquet(tmp_path / "t.parquet", [record("a", np.ones(2, np.float32))]))
    newer = tmp_path / "newer.parquet"
    pq.write_table(table.replace_schema_metadata({schema_gen.PARQUET_LAYOUT_KEY: "99"}), newer)
    trace = read(newer)
    assert len(list(trace)) == 1
    (note,) = trace.diagnostics
    assert "Parquet layout 99, newer than this orchlog's 2" in note.message
