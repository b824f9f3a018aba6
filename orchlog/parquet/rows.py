"""Rows on their way into a row group, and their conversion to one Arrow table.

A row is given as the record's field values by name (what
`orchlog.encoding.record.record_values` returns, or what pack gathers from a
TraceRecord): `stats` an object with the stats fields as attributes,
`values` the leading values, `meta` a dict of scalars, `data` the tensor
bytes or None. `RowBatch.table` builds the Arrow table with the generated
schema (its column names, the dtype in its NumPy spelling), the nested and
binary columns from flat buffers rather than one Python object per element.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from orchlog import schema_gen
from orchlog.encoding.record import json_scalar
from orchlog.encoding.text import sort_key
from orchlog.parquet import schema
from orchlog.parquet.schema import ARROW_SCHEMA, COLUMN_OF

_STATS = frozenset(f.name for f in schema_gen.STATS_FIELDS)
_NESTED = ("shape", "values", "meta", "data")
_PLAIN = tuple(f for f in COLUMN_OF if f not in _NESTED)  # fields of flat columns, stats included
_REQUIRED = tuple(f for f in _PLAIN if not ARROW_SCHEMA.field(COLUMN_OF[f]).nullable)
# A row's share of a row group beyond its tensor bytes: keys, stats, hash, list headers.
_ROW_OVERHEAD = 160


class _Row(NamedTuple):
    plain: tuple[Any, ...]  # values of the _PLAIN columns, in order
    shape: np.ndarray
    values: np.ndarray
    meta: list[tuple[str, str]]
    has_data: bool
    data_end: int  # where its tensor bytes end in the arena (they start where the previous row's end)


class RowBatch:
    """Rows appended one at a time; `nbytes` estimates the row group they will make.

    Tensor bytes are copied into an arena that is reused from row group to row
    group, and the table's data column is a view of it: fresh memory for every
    tensor, and the copy that joins them afterwards, used to cost more than
    compressing them. There are two arenas, used in turn, so that a table being
    written by a background thread keeps its bytes while the next batch fills the
    other; a table must be written before the batch after it is cleared.

    A row is committed by one list append, so a Ctrl-C arriving in the middle of
    `append` leaves the batch as it was, never half a row.
    """

    def __init__(self, capacity: int = 0) -> None:
        self.capacity = capacity  # arena size; a larger tensor gets an arena of its own size
        self._arenas = [np.empty(0, np.uint8), np.empty(0, np.uint8)]
        self._current = 0
        self._rows: list[_Row] = []
        self.nbytes = 0
        self.generation = 0  # counts clears: which rows a writer has already taken

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def _used(self) -> int:
        return self._rows[-1].data_end if self._rows else 0

    def has_room(self, nbytes: int) -> bool:
        """Whether a tensor of nbytes fits before the batch is cleared (an empty batch always has room)."""
        return not self._rows or self._used + nbytes <= len(self._arenas[self._current])

    def reserve(self, nbytes: int) -> memoryview:
        """Writable room for the next row's tensor bytes; `append(..., reserved=True)` keeps them."""
        arena, used = self._arenas[self._current], self._used
        if used + nbytes > len(arena):
            if self._rows:
                raise ValueError("no room for this tensor in the row group; write and clear the batch first")
            arena = self._arenas[self._current] = np.empty(max(self.capacity, nbytes), np.uint8)
        return arena[used : used + nbytes].data

    def append(self, fields: Mapping[str, Any], reserved: bool = False) -> None:
        """Add one row; ValueError (and nothing added) when a required field is missing.

        With `reserved`, `fields["data"]` already lies in the room `reserve` gave.
        """
        stats = fields["stats"]
        plain = tuple(getattr(stats, name) if name in _STATS else fields[name] for name in _PLAIN)
        missing = [name for name, value in zip(_PLAIN, plain) if value is None and name in _REQUIRED]
        if missing:
            raise ValueError(f"record lacks {', '.join(missing)}")
        with np.errstate(invalid="ignore"):  # widening a signalling NaN is no error (NumPy warns)
            values = np.asarray(fields["values"], dtype=np.float64).reshape(-1)
        meta = fields["meta"] or {}
        data = fields["data"]
        length = 0 if data is None else memoryview(data).nbytes
        if length > schema.MAX_TENSOR_BYTES:
            raise ValueError(
                f"a tensor of {length:,} bytes is more than one Parquet value can hold ({schema.MAX_TENSOR_BYTES:,})"
            )
        if data is not None and not reserved:
            self.reserve(length)[:] = memoryview(data).cast("B")
        self._rows.append(
            _Row(
                plain,
                np.asarray(fields["shape"], dtype=np.int64).reshape(-1),
                values,
                [(k, json_scalar(meta[k])) for k in sorted(meta, key=sort_key)],
                data is not None,
                self._used + length,
            )
        )
        self.nbytes += _ROW_OVERHEAD + 8 * values.size + length

    def table(self) -> pa.Table:
        """The rows as one Arrow table with the trace schema (the batch is left as it is)."""
        rows = self._rows
        plain = dict(zip(_PLAIN, zip(*(r.plain for r in rows)) if rows else [()] * len(_PLAIN)))
        plain["dtype"] = tuple(schema_gen.DTYPE_PARQUET.get(d, d) for d in plain["dtype"])
        columns = {f: pa.array(col, type=ARROW_SCHEMA.field(COLUMN_OF[f]).type) for f, col in plain.items()}
        columns["shape"] = _list_array([r.shape for r in rows], pa.int64())
        columns["values"] = _list_array([r.values for r in rows], pa.float64())
        columns["meta"] = _map_array([r.meta for r in rows])
        ends = [r.data_end for r in rows]
        columns["data"] = _large_binary(self._arenas[self._current][: self._used], ends, [r.has_data for r in rows])
        return pa.Table.from_arrays([columns[f] for f in COLUMN_OF], schema=ARROW_SCHEMA)

    def clear(self) -> None:
        """Empty the batch and turn to the other arena (the table just built still uses this one)."""
        self._rows, self.nbytes, self._current = [], 0, 1 - self._current
        self.generation += 1


def _list_array(items: list[np.ndarray], item_type: pa.DataType) -> pa.Array:
    flat = np.concatenate(items) if items else np.empty(0)
    offsets = np.zeros(len(items) + 1, dtype=np.int32)
    np.cumsum([len(i) for i in items], out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, type=item_type))


def _map_array(rows: list[list[tuple[str, str]]]) -> pa.Array:
    offsets = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    keys = pa.array([k for r in rows for k, _ in r], type=pa.string())
    items = pa.array([v for r in rows for _, v in r], type=pa.string())
    return pa.MapArray.from_arrays(pa.array(offsets), keys, items)


def _large_binary(data: np.ndarray, ends: list[int], valid: list[bool]) -> pa.Array:
    """The data column over the arena's bytes, without copying them; absent tensors are null."""
    offsets = pa.py_buffer(np.array([0, *ends], dtype=np.int64))
    null_count = len(valid) - sum(valid)
    validity = pa.py_buffer(np.packbits(np.array(valid, dtype=bool), bitorder="little")) if null_count else None
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(valid), [validity, offsets, pa.py_buffer(data)], null_count
    )
