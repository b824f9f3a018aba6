"""RowBatch: rows become one Arrow table, tensor bytes kept in a reused arena without a second copy."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.encoding.record import record_values
from orchlog.parquet.rows import RowBatch
from orchlog.parquet.schema import ARROW_SCHEMA, FIELD_OF
from tests.tracegen import record


def _fields(i: int, n: int = 8, **kw):
    return record_values(record(f"c{i}", np.arange(n, dtype=np.float32) + i, seq=i, **kw))


def test_rows_become_a_table_with_the_trace_schema():
    batch = RowBatch(capacity=1024)
    batch.append(_fields(0, layer=2, meta={"seed": 7, "mode": "prefill"}))
    batch.append({**_fields(1), "data": None})
    table = batch.table()
    batch.clear()
    assert table.schema == ARROW_SCHEMA and len(batch) == 0
    first, second = ({FIELD_OF[c]: v for c, v in row.items()} for row in table.to_pylist())
    assert first["layer"] == 2 and first["shape"] == [8] and first["values"][:3] == [0.0, 1.0, 2.0]
    assert first["dtype"] == "<f4", "NumPy's spelling"
    assert first["meta"] == [("mode", '"prefill"'), ("seed", "7")]
    assert first["data"] == np.arange(8, dtype=np.float32).tobytes()
    assert second["data"] is None and second["blake3"] == _fields(1)["blake3"]


def _data_buffer(batch: RowBatch):
    buffer = batch.table().column("data").chunk(0).buffers()[2]
    batch.clear()
    return buffer


def test_the_data_column_is_a_view_of_the_arena_and_the_arenas_take_turns():
    batch = RowBatch(capacity=1024)
    batch.append(_fields(0))
    first = _data_buffer(batch)
    batch.append(_fields(1))
    second = _data_buffer(batch)
    batch.append(_fields(2))
    third = _data_buffer(batch)
    assert first.address != second.address, "the table in flight keeps its arena while the next fills the other"
    assert first.address == third.address, "arenas are reused, not allocated per row group"


def test_a_tensor_larger_than_the_arena_gets_an_arena_of_its_own_size():
    batch = RowBatch(capacity=16)
    assert batch.has_room(1000)
    batch.append(_fields(0, n=250))
    assert not batch.has_room(4)
    with pytest.raises(ValueError, match="no room"):
        batch.reserve(4)
    assert batch.table().column("data")[0].as_py() == (np.arange(250, dtype=np.float32)).tobytes()


def test_reserved_room_is_kept_without_a_copy():
    batch = RowBatch(capacity=64)
    fields = _fields(3)
    room = batch.reserve(len(fields["data"]))
    room[:] = fields["data"]
    batch.append({**fields, "data": room}, reserved=True)
    assert batch.table().column("data")[0].as_py() == fields["data"]


def test_a_row_missing_a_required_field_is_refused_and_nothing_is_added():
    batch = RowBatch()
    with pytest.raises(ValueError, match="lacks blake3"):
        batch.append({**_fields(0), "blake3": None})
    assert len(batch) == 0 and batch.nbytes == 0
