"""A row group's summary columns as a RecordBatch, column by column, without a Python object per row.

The record path (reading.py `_record`) checks each row's values as every reader
does (orchlog.read.fields) and names what is wrong with a row it skips. Here
the same checks run over whole columns; a table holding anything those checks
would reject or treat one row at a time (a column of another type than this
layout's, a null or negative where the schema allows none, a meta that is not
an object of scalars) gets None back, and the caller reads it row by row, so
that every problem is still reported in the record path's words. Files of
other writers whose types differ from this layout's take that path throughout.
(The way back, a batch's rows as columns for pack, is rows.py's `columns_of`.)
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from orchlog.parquet.schema import ARROW_SCHEMA, COLUMN_OF, DTYPE_COLUMN, STATS_COLUMNS, dtype_name
from orchlog.read import fields
from orchlog.read.batch import COUNT_FIELDS, NONE, STAT_FIELDS, RecordBatch
from orchlog.read.records import identity
from orchlog.schema_gen import COLUMNS, ColumnSpec
from orchlog.strings import Strings

_DEFAULTS = identity({})  # each identity field's value where a record has none
_VALUES = COLUMN_OF["values"]
_MAX_LOG2_NUMEL = 62.0  # a shape whose product may pass 2**63 is the record path's to reject and name


class _RowByRow(Exception):
    """A value the column checks do not settle: the record path reads the table."""


def batch_of(table: pa.Table, path: str, rows: np.ndarray) -> RecordBatch | None:
    """The table's rows as a batch (no loaders: the caller knows which rows hold a tensor), located at
    `rows` (each row's number in the file, as a record's Location says it); None when they are the record
    path's to read."""
    try:
        for name in table.column_names:
            if name in ARROW_SCHEMA.names and not _reads_as(
                table.schema.field(name).type, ARROW_SCHEMA.field(name).type
            ):
                raise _RowByRow
        return _batch(table, path, rows)
    except (_RowByRow, pa.ArrowException, ValueError, IndexError, OverflowError):
        return None  # damaged pages too: the record path reports them in its own words


def _reads_as(actual: pa.DataType, expected: pa.DataType) -> bool:
    """Whether a column of type `actual` holds values the record path reads as it reads `expected`'s: this
    layout's types, and those other writers use for them (other integer widths, large strings and lists,
    any name for a list's items)."""
    if pa.types.is_integer(expected):
        return bool(pa.types.is_signed_integer(actual) or actual in (pa.uint8(), pa.uint16(), pa.uint32()))
    if pa.types.is_floating(expected):
        return actual in (pa.float32(), pa.float64())
    if pa.types.is_string(expected):
        return bool(pa.types.is_string(actual) or pa.types.is_large_string(actual))
    if pa.types.is_fixed_size_list(expected):
        return bool(
            pa.types.is_fixed_size_list(actual)
            and actual.list_size == expected.list_size
            and _reads_as(actual.value_type, expected.value_type)
        )
    if pa.types.is_list(expected):
        lists = pa.types.is_list(actual) or pa.types.is_large_list(actual)
        return bool(lists and _reads_as(actual.value_type, expected.value_type))
    if pa.types.is_map(expected):
        return bool(pa.types.is_map(actual) and actual.key_type == pa.string() and actual.item_type == pa.string())
    return bool(actual == expected)


def _batch(table: pa.Table, path: str, rows: np.ndarray) -> RecordBatch:
    n = table.num_rows
    shape_off, shape_dims = _shapes(_required(table, COLUMN_OF["shape"]))
    val_off, values = list_column(table.column(_VALUES)) if _VALUES in table.column_names else _empty_lists(n)
    stats, counts = _stats(table, n)
    return RecordBatch(
        **{c.name: _identity_column(table, c, n) for c in COLUMNS},
        dtype=_strings(_required(table, DTYPE_COLUMN), dtype_name),
        numel=_counts(_required(table, COLUMN_OF["numel"])),
        has_shape=np.ones(n, dtype=bool),
        shape_off=shape_off,
        shape_dims=shape_dims,
        val_off=val_off,
        values=values,
        stats=stats,
        counts=counts,
        blake3=_hashes(table.column(COLUMN_OF["blake3"]) if COLUMN_OF["blake3"] in table.column_names else None, n),
        meta=_metas(table.column(COLUMN_OF["meta"]) if COLUMN_OF["meta"] in table.column_names else None, n),
        path=Strings.repeat(path, n),
        line=np.full(n, NONE, dtype=np.int64),
        offset=np.full(n, NONE, dtype=np.int64),
        order=np.zeros(n, dtype=np.int64),
        loader=np.full(n, None, dtype=object),
        row=np.asarray(rows, dtype=np.int64),
    )


def _required(table: pa.Table, name: str) -> pa.Array:
    """A column every row must fill (the record path rejects a row without it)."""
    if name not in table.column_names:
        raise _RowByRow
    column = table.column(name).combine_chunks()
    if column.null_count:
        raise _RowByRow
    return column


def _identity_column(table: pa.Table, c: ColumnSpec, n: int) -> Any:
    """A schema column as RecordBatch holds it; an absent value takes the field's default (records.identity)."""
    name = COLUMN_OF[c.name]
    if c.name == "checkpoint":  # the one identity field without a default
        return _strings(_required(table, name))
    default = _DEFAULTS[c.name]
    if name not in table.column_names:
        return _constant(c, default, n)
    column = table.column(name).combine_chunks()
    if column.null_count and default is not None:
        column = column.fill_null(default)
    if c.kind == "text":
        return _strings(column)
    if c.kind == "int":
        return _counts(column)  # every key number is >= 0 in the schema
    if c.kind == "bool":
        return column.cast(pa.int8()).fill_null(NONE).to_numpy(zero_copy_only=False).astype(np.int8)
    return _float_rows(column, c)


def _constant(c: ColumnSpec, value: Any, n: int) -> Any:
    if c.kind == "text":
        return Strings.repeat(value, n)
    if c.kind == "floats":
        return np.full((n, c.length), np.nan, dtype=c.float_dtype)
    code = NONE if value is None else int(value)
    return np.full(n, code, dtype=np.int8 if c.kind == "bool" else np.int64)


def _strings(column: pa.Array, name: Any = None) -> Strings:
    """A string column as Strings; `name` maps each distinct value (values it maps alike share a code)."""
    encoded = column.dictionary_encode()
    table: dict[str, int] = {}
    remap = np.array(
        [table.setdefault(v if name is None else name(v), len(table)) for v in encoded.dictionary.to_pylist()] + [-1],
        dtype=np.int32,
    )
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    return Strings(list(table), remap[codes])


def _counts(column: pa.Array) -> np.ndarray:
    """Integers that must not be negative, as int64; NONE where null."""
    low = pc.min(column).as_py()
    if low is not None and low < 0:
        raise _RowByRow
    out: np.ndarray = column.cast(pa.int64()).fill_null(NONE).to_numpy(zero_copy_only=False)
    return out


def _float_rows(column: pa.Array, c: ColumnSpec) -> np.ndarray:
    """A fixed-size list of floats as [n, length] rows at the schema's precision (f32 ones rounded to f32,
    as fields.identity_values rounds them); NaN rows where null."""
    if column.flatten().null_count:  # a null inside a row: the record path's to read
        raise _RowByRow
    flat = column.values.to_numpy(zero_copy_only=False)
    start = column.offset * c.length
    flat = flat[start : start + len(column) * c.length]
    with np.errstate(over="ignore"):
        rows: np.ndarray = flat.astype(c.float_dtype).reshape(len(column), c.length)
    if column.null_count:
        rows[~column.is_valid().to_numpy(zero_copy_only=False)] = np.nan
    return rows


def list_column(
    column: pa.ChunkedArray | pa.Array, dtype: type[np.generic] = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """A list column as offsets (from 0) and its flat items; a null item of a float list is NaN."""
    chunk = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    offsets = chunk.offsets.to_numpy().astype(np.int64)
    flat = chunk.values.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    return offsets - offsets[0], flat[offsets[0] : offsets[-1]]


def _empty_lists(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.float64)


def _shapes(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Shapes as offsets and dims, when every dim is a count and no shape's product may pass int64."""
    if column.flatten().null_count:
        raise _RowByRow
    off, dims = list_column(column, np.int64)
    if len(dims) and dims.min() < 0:
        raise _RowByRow
    log_sums = np.concatenate(([0.0], np.cumsum(np.log2(np.maximum(dims, 1)))))
    if len(dims) and (log_sums[off[1:]] - log_sums[off[:-1]]).max() >= _MAX_LOG2_NUMEL:
        raise _RowByRow
    return off, dims


def _stats(table: pa.Table, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The float stats (NaN where null) and the counts (a null count is 0); without every stats column, none."""
    if not all(c in table.column_names for c in STATS_COLUMNS):
        return np.full((n, len(STAT_FIELDS)), np.nan), np.full((n, len(COUNT_FIELDS)), NONE, dtype=np.int64)
    floats = [table.column(COLUMN_OF[f]).combine_chunks() for f in STAT_FIELDS]
    stats = np.column_stack([c.cast(pa.float64()).to_numpy(zero_copy_only=False) for c in floats])
    counts = [_counts(table.column(COLUMN_OF[f]).combine_chunks().fill_null(0)) for f in COUNT_FIELDS]
    return stats.astype(np.float64).reshape(n, len(STAT_FIELDS)), np.column_stack(counts).reshape(n, len(COUNT_FIELDS))


def _hashes(column: pa.ChunkedArray | None, n: int) -> np.ndarray:
    """The hashes as S64, b"" where absent; ASCII of at most 64 characters (fields.blake3), or row by row."""
    if column is None:
        return np.zeros(n, dtype="S64")
    text = column.combine_chunks().fill_null("")
    if len(text) and (not pc.all(pc.string_is_ascii(text)).as_py() or pc.max(pc.utf8_length(text)).as_py() > 64):
        raise _RowByRow
    return np.array(text.to_pylist(), dtype="S64")


def _metas(column: pa.ChunkedArray | None, n: int) -> np.ndarray:
    """Each row's meta (a dict, None when empty), checked as fields.meta checks it, or row by row."""
    out = np.full(n, None, dtype=object)
    if column is None:
        return out
    maps = column.combine_chunks()
    filled = (np.diff(maps.offsets.to_numpy()) > 0) & maps.is_valid().to_numpy(zero_copy_only=False)
    for row in np.flatnonzero(filled).tolist():
        try:
            out[row] = fields.meta(meta_from_pairs(maps[row].as_py())) or None
        except (ValueError, TypeError):
            raise _RowByRow from None
    return out


def meta_from_pairs(pairs: list[tuple[str, str]] | None) -> dict[str, Any]:
    """meta values are canonical JSON text; text that is not JSON is kept as it is."""
    out: dict[str, Any] = {}
    for key, text in pairs or []:
        try:
            out[key] = json.loads(text) if text is not None else None
        except (json.JSONDecodeError, RecursionError):
            out[key] = text
    return out
