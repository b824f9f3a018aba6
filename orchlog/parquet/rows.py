"""Rows on their way into a row group, kept column by column.

A row is given as the record's field values by name (what
`orchlog.encoding.record.record_values` returns, or what pack gathers from a
TraceRecord): `stats` an object with the stats fields as attributes,
`values` the leading values, `meta` a dict of scalars, `data` the tensor
bytes or None. `RowBatch.take_table` turns the rows into one Arrow table
with the generated schema, building the nested and binary columns from
flat buffers rather than one Python object per element.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pyarrow as pa

from orchlog.encoding.record import json_scalar
from orchlog.encoding.text import sort_key
from orchlog.parquet.schema import ARROW_SCHEMA, DATA_COLUMN, STATS_COLUMNS

_NESTED = ("shape", "values", "meta", DATA_COLUMN)
_PLAIN = tuple(c for c in ARROW_SCHEMA.names if c not in _NESTED and c not in STATS_COLUMNS)
_REQUIRED = tuple(f.name for f in ARROW_SCHEMA if not f.nullable and f.name not in _NESTED)
# A row's share of a row group beyond its tensor bytes: keys, stats, hash, list headers.
_ROW_OVERHEAD = 160


class RowBatch:
    """Rows appended one at a time; `nbytes` estimates the row group they will make."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._plain: dict[str, list[Any]] = {name: [] for name in (*_PLAIN, *STATS_COLUMNS)}
        self._shapes: list[list[int]] = []
        self._values: list[np.ndarray] = []
        self._meta: list[list[tuple[str, str]]] = []
        self._data: list[Any] = []
        self._data_lengths: list[int] = []
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._data)

    def append(self, fields: Mapping[str, Any]) -> None:
        """Add one row; ValueError (and nothing added) when a required field is missing."""
        stats = fields["stats"]
        row = {name: fields[name] for name in _PLAIN}
        row.update((name, getattr(stats, name)) for name in STATS_COLUMNS)
        missing = [name for name in _REQUIRED if row.get(name) is None]
        if missing:
            raise ValueError(f"record lacks {', '.join(missing)}")
        values = np.asarray(fields["values"], dtype=np.float64).reshape(-1)
        meta = fields["meta"] or {}
        data = fields[DATA_COLUMN]
        length = 0 if data is None else memoryview(data).nbytes
        for name, value in row.items():
            self._plain[name].append(value)
        self._shapes.append([int(d) for d in fields["shape"]])
        self._values.append(values)
        self._meta.append([(k, json_scalar(meta[k])) for k in sorted(meta, key=sort_key)])
        self._data.append(data)
        self._data_lengths.append(length)
        self.nbytes += _ROW_OVERHEAD + 8 * values.size + length

    def take_table(self) -> pa.Table:
        """The rows as one Arrow table with the trace schema; the batch is empty afterwards."""
        columns = {name: pa.array(self._plain[name], type=ARROW_SCHEMA.field(name).type)
                   for name in self._plain}
        columns["shape"] = _list_array([np.asarray(s, dtype=np.int64) for s in self._shapes], pa.int64())
        columns["values"] = _list_array(self._values, pa.float64())
        columns["meta"] = _map_array(self._meta)
        columns[DATA_COLUMN] = _large_binary(self._data, self._data_lengths)
        self._reset()
        return pa.Table.from_arrays([columns[name] for name in ARROW_SCHEMA.names], schema=ARROW_SCHEMA)


def _offsets(lengths: list[int], dtype: type) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=dtype)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _list_array(items: list[np.ndarray], item_type: pa.DataType) -> pa.Array:
    flat = np.concatenate(items) if items else np.empty(0)
    offsets = _offsets([len(i) for i in items], np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, type=item_type))


def _map_array(rows: list[list[tuple[str, str]]]) -> pa.Array:
    offsets = _offsets([len(r) for r in rows], np.int32)
    keys = pa.array([k for r in rows for k, _ in r], type=pa.string())
    items = pa.array([v for r in rows for _, v in r], type=pa.string())
    return pa.MapArray.from_arrays(pa.array(offsets), keys, items)


def _large_binary(chunks: list[Any], lengths: list[int]) -> pa.Array:
    """One copy of the tensor bytes into a single Arrow buffer; None becomes null."""
    data = pa.py_buffer(b"".join(c for c in chunks if c is not None))
    offsets = pa.py_buffer(_offsets(lengths, np.int64))
    valid = np.array([c is not None for c in chunks], dtype=bool)
    null_count = int(len(chunks) - valid.sum())
    validity = pa.py_buffer(np.packbits(valid, bitorder="little")) if null_count else None
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(chunks), [validity, offsets, data], null_count)
