"""Rows on their way into a row group, and their conversion to one Arrow table.

A row is given as the record's field values by name (what
`orchlog.encoding.record.record_values` returns, or what pack gathers from a
TraceRecord): `stats` an object with the stats fields as attributes,
`values` the leading values, `meta` a dict of scalars, `data` the tensor
bytes or None. Many rows may also come at once as their columns (pack's
batches: `packable` says which rows of a RecordBatch can, `columns_of` makes
their columns, `append_columns` takes them). `RowBatch.table` builds the
Arrow table with the generated schema (its column names, the dtype in its
NumPy spelling), the nested and binary columns from flat buffers rather than
one Python object per element.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from orchlog import schema_gen
from orchlog.encoding.record import json_scalar
from orchlog.encoding.text import sort_key
from orchlog.parquet import schema
from orchlog.parquet.schema import ARROW_SCHEMA, COLUMN_OF
from orchlog.read.batch import COUNT_FIELDS, NONE, STAT_FIELDS, RecordBatch, ragged_take
from orchlog.schema_gen import COLUMNS, DTYPE_PARQUET

_STATS = frozenset(f.name for f in schema_gen.STATS_FIELDS)
_NESTED = ("shape", "values", "meta", "data")
PLAIN = tuple(f for f in COLUMN_OF if f not in _NESTED)  # fields of flat columns, stats included
_REQUIRED = tuple(f for f in PLAIN if not ARROW_SCHEMA.field(COLUMN_OF[f]).nullable)
# A row's share of a row group beyond its tensor bytes: keys, stats, hash, list headers.
_ROW_OVERHEAD = 160


class _Row(NamedTuple):
    plain: tuple[Any, ...]  # values of the PLAIN columns, in order
    shape: np.ndarray
    values: np.ndarray
    meta: list[tuple[str, str]]
    has_data: bool
    data_end: int  # where its tensor bytes end in the arena (they start where the previous row's end)


class _Columns(NamedTuple):
    """Rows given as their columns (`append_columns`)."""

    columns: dict[str, pa.Array]  # by field, every one but `data`, of the schema's types
    has_data: list[bool]
    ends: list[int]  # where each row's tensor bytes end in the arena
    data_end: int  # where the last one's end


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
        self._rows: list[_Row | _Columns] = []
        self._count = 0  # rows: a _Columns entry holds many
        self.nbytes = 0
        self.generation = 0  # counts clears: which rows a writer has already taken

    def __len__(self) -> int:
        return self._count

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
        plain = tuple(getattr(stats, name) if name in _STATS else fields[name] for name in PLAIN)
        missing = [name for name, value in zip(PLAIN, plain) if value is None and name in _REQUIRED]
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
                meta_pairs(meta),
                data is not None,
                self._used + length,
            )
        )
        self._count += 1
        self.nbytes += _ROW_OVERHEAD + 8 * values.size + length

    def append_columns(self, columns: dict[str, pa.Array], tensors: Sequence[memoryview | None]) -> None:
        """Add len(tensors) rows given as their columns (every field's but `data`, of the schema's types, as
        `columns_of` makes them) and their tensor bytes, which are copied into the arena."""
        lengths = [0 if t is None else t.nbytes for t in tensors]
        used = self._used
        room = np.frombuffer(self.reserve(sum(lengths)), dtype=np.uint8)
        ends, at = [], 0
        for tensor, length in zip(tensors, lengths):
            if tensor is not None:
                room[at : at + length] = np.frombuffer(tensor, dtype=np.uint8)
            at += length
            ends.append(used + at)
        self._rows.append(_Columns(columns, [t is not None for t in tensors], ends, used + at))
        self._count += len(tensors)
        self.nbytes += _ROW_OVERHEAD * len(tensors) + 8 * len(columns["values"].values) + at

    def table(self) -> pa.Table:
        """The rows as one Arrow table with the trace schema (the batch is left as it is)."""
        parts: list[dict[str, pa.Array]] = []
        ends: list[int] = []
        valid: list[bool] = []
        run: list[_Row] = []  # rows appended one at a time since the last columns

        def close_run() -> None:
            parts.append(_row_columns(run))
            ends.extend(r.data_end for r in run)
            valid.extend(r.has_data for r in run)
            run.clear()

        for entry in self._rows:
            if isinstance(entry, _Row):
                run.append(entry)
                continue
            if run:
                close_run()
            parts.append(entry.columns)
            ends.extend(entry.ends)
            valid.extend(entry.has_data)
        if run or not parts:
            close_run()
        columns = {f: parts[0][f] if len(parts) == 1 else pa.concat_arrays([p[f] for p in parts]) for f in parts[0]}
        columns["data"] = _large_binary(self._arenas[self._current][: self._used], ends, valid)
        return pa.Table.from_arrays([columns[f] for f in COLUMN_OF], schema=ARROW_SCHEMA)

    def clear(self) -> None:
        """Empty the batch and turn to the other arena (the table just built still uses this one)."""
        self._rows, self._count, self.nbytes, self._current = [], 0, 0, 1 - self._current
        self.generation += 1


def _row_columns(rows: list[_Row]) -> dict[str, pa.Array]:
    """Every column but `data` of rows appended one at a time."""
    plain = dict(zip(PLAIN, zip(*(r.plain for r in rows)) if rows else [()] * len(PLAIN)))
    plain["dtype"] = tuple(schema_gen.DTYPE_PARQUET.get(d, d) for d in plain["dtype"])
    columns = {f: pa.array(col, type=ARROW_SCHEMA.field(COLUMN_OF[f]).type) for f, col in plain.items()}
    columns["shape"] = _list_array([r.shape for r in rows], pa.int64())
    columns["values"] = _list_array([r.values for r in rows], pa.float64())
    columns["meta"] = map_array([r.meta for r in rows])
    return columns


def meta_pairs(meta: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A meta map as its column holds it: each value's canonical JSON text, keys in canonical order."""
    return [(k, json_scalar(meta[k])) for k in sorted(meta, key=sort_key)]


def _list_array(items: list[np.ndarray], item_type: pa.DataType) -> pa.Array:
    flat = np.concatenate(items) if items else np.empty(0)
    offsets = np.zeros(len(items) + 1, dtype=np.int32)
    np.cumsum([len(i) for i in items], out=offsets[1:])
    return list_array(offsets, flat, item_type)


def list_array(offsets: np.ndarray, flat: np.ndarray, item_type: pa.DataType) -> pa.Array:
    """A list column from its offsets (from 0) and items."""
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(flat, type=item_type))


def map_array(rows: list[list[tuple[str, str]]]) -> pa.Array:
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


# ------------------------------------------------------------ a batch's rows as columns (pack)

_INT32_COLUMNS = tuple(c.name for c in COLUMNS if ARROW_SCHEMA.field(COLUMN_OF[c.name]).type == pa.int32())
_REQUIRED_INTS = tuple(
    c.name for c in COLUMNS if c.kind in ("int", "bool") and not ARROW_SCHEMA.field(COLUMN_OF[c.name]).nullable
)
_REQUIRED_TEXTS = tuple(
    c.name for c in COLUMNS if c.kind == "text" and not ARROW_SCHEMA.field(COLUMN_OF[c.name]).nullable
)


def packable(batch: RecordBatch) -> np.ndarray:
    """The rows of a batch pack can write from their columns as they are: tensor bytes in memory or none,
    and nothing the record path would compute (stats, hash, sketch, numel: packing._fields) or refuse (a
    required field absent, a number past its 32-bit column)."""
    data_len = batch.data_len
    assert data_len is not None, "made by RecordBatch.__post_init__"
    ok: np.ndarray = batch.has_shape & (batch.numel != NONE) & (batch.counts[:, 0] != NONE) & (batch.blake3 != b"")
    ok &= batch.dtype.codes >= 0
    # A tensor behind a loader is read as a record's (into the row group's memory), and so is one past what a
    # Parquet value holds (the record path reports it).
    ok &= (data_len >= 0) | ~batch.loader.astype(bool)
    ok &= data_len <= schema.MAX_TENSOR_BYTES
    for c in COLUMNS:
        column = getattr(batch, c.name)
        if c.kind == "floats":
            ok &= ~np.isnan(column).all(axis=1)
        elif c.name in _REQUIRED_TEXTS:
            ok &= column.codes >= 0
        elif c.name in _REQUIRED_INTS and c.name != "seq":  # a missing seq is the record's place
            ok &= column != NONE
        if c.name in _INT32_COLUMNS:
            ok &= (column == NONE) | ((column >= -(2**31)) & (column < 2**31))
    return ok


def columns_of(batch: RecordBatch, rows: np.ndarray) -> dict[str, pa.Array]:
    """The columns, every one but `data`, of the given packable rows, by field, of the schema's types
    (what RowBatch.append_columns takes)."""
    out: dict[str, pa.Array] = {}
    for c in COLUMNS:
        kind = ARROW_SCHEMA.field(COLUMN_OF[c.name]).type
        column = getattr(batch, c.name)[rows]
        if c.kind == "text":
            out[c.name] = pa.array(column.values(), type=kind)
        elif c.kind == "floats":
            with np.errstate(over="ignore", invalid="ignore"):
                flat = column.astype(np.float32).reshape(-1)
            out[c.name] = pa.FixedSizeListArray.from_arrays(pa.array(flat, type=kind.value_type), c.length)
        else:
            if c.name == "seq":  # formats without an execution counter: the record's place in its input
                column = np.where(column == NONE, batch.order[rows], column)
            values = column == 1 if c.kind == "bool" else column
            out[c.name] = pa.array(values, mask=column == NONE, type=kind)
    out["dtype"] = pa.array(batch.dtype[rows].per_row(lambda d: d and DTYPE_PARQUET.get(d, d)), type=pa.string())
    out["numel"] = pa.array(batch.numel[rows], type=pa.int64())
    for k, name in enumerate(STAT_FIELDS):
        x = batch.stats[rows, k]
        out[name] = pa.array(x, mask=np.isnan(x), type=pa.float64())
    for k, name in enumerate(COUNT_FIELDS):
        out[name] = pa.array(batch.counts[rows, k], type=pa.int64())
    out["blake3"] = pa.array(np.char.decode(batch.blake3[rows], "ascii"), type=pa.string())
    out["shape"] = list_array(*ragged_take(batch.shape_off, batch.shape_dims, rows), pa.int64())
    out["values"] = list_array(*ragged_take(batch.val_off, batch.values, rows), pa.float64())
    out["meta"] = map_array([meta_pairs(m) if m else [] for m in batch.meta[rows].tolist()])
    return out
