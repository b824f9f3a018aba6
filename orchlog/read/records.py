"""What a reader yields, record by record: `TraceRecord`s with their keys, summaries and lazily loaded
tensors, where they sit (`Location`) and the problems found reading them (`Diagnostic`). The record types
below both ways of reading a trace (records, and the column batches of orchlog/read/batch.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from orchlog.encoding import dtypes
from orchlog.read.fields import data_fits
from orchlog.records import record
from orchlog.schema_gen import COLUMNS, KEY_FIELDS, RecordFields, Stats


@record(frozen=True)
class Location:
    """Where a record or problem sits: a file and a 1-based line, a byte offset or a 0-based row."""

    path: str
    line: int | None = None
    offset: int | None = None
    row: int | None = None  # Parquet: the row number in the file, as DuckDB's file_row_number counts

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.offset is not None:
            return f"{self.path}@{self.offset}"
        if self.row is not None:
            return f"{self.path}#row{self.row}"
        return self.path


@record(frozen=True)
class Diagnostic:
    """A problem found while reading; `fatal` ones mean the rest of that file was not read."""

    location: Location
    message: str
    fatal: bool = False

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(RecordFields)}


def identity(values: Mapping[str, Any]) -> dict[str, Any]:
    """A record's identity fields (the schema's COLUMNS) from a format's values by name: a value that is
    absent or None takes the field's default, floats become f64 arrays of the field's precision's values
    (f32 ones rounded to f32, as a batch holds them)."""
    out = {}
    for c in COLUMNS:
        value = values.get(c.name)
        if value is None:
            value = _DEFAULTS[c.name]
        elif c.kind == "floats":
            with np.errstate(over="ignore"):
                value = np.asarray(value, dtype=c.float_dtype).astype(np.float64)
        out[c.name] = value
    return out


def tensor_from(
    raw: bytes | memoryview | None, dtype: str | None, numel: int | None, shape: tuple[int, ...] | None
) -> np.ndarray | None:
    """A record's tensor bytes as a shaped array, by the rules of `TraceRecord.tensor`."""
    if raw is None or dtype is None or not data_fits(memoryview(raw).nbytes, dtype, numel, shape):
        return None
    flat = dtypes.from_bytes(raw, dtype)
    if dtype == "bf16":
        flat = dtypes.widen(flat, "bf16")
    return flat.reshape(shape if shape is not None else (-1,))


@record
class TraceRecord(RecordFields):
    """One record, whatever format it came from. Absent information is None.

    The identity fields (checkpoint, the run's fields, the key parts, seq: the
    emitter's execution-order counter, when the format has one) come from the
    schema, by `RecordFields`; these are the tensor's and the reader's."""

    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    numel: int | None = None
    values: np.ndarray | None = None  # leading values as f64 (all of them for formats that store all)
    stats: Stats | None = None
    blake3: str | None = None
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    location: Location | None = None
    order: int = 0  # position in the trace's file order, assigned by the reader
    # Returns the tensor bytes: bytes, or a read-only memoryview where a format can hand them over without a copy.
    loader: Callable[[], bytes | memoryview] | None = dataclasses.field(default=None, repr=False)
    # Re-reads the stored record (a binary frame that carries a checksum) and says what is wrong, or None.
    frame_check: Callable[[], str | None] | None = dataclasses.field(default=None, repr=False)

    @property
    def has_data(self) -> bool:
        return self.loader is not None

    def raw_bytes(self) -> bytes | memoryview | None:
        """The full tensor bytes as stored (little-endian, own dtype), or None without data.

        Large tensors may come back as a read-only view of the file mapped into memory."""
        return None if self.loader is None else self.loader()

    def tensor(self) -> np.ndarray | None:
        """The full tensor as a shaped array; bf16 is widened exactly to f32. None without data, and
        None when the bytes disagree with the record (unknown dtype, a length other than numel
        elements, a shape that does not make numel): `orchlog validate` reports those.
        OSError when the bytes cannot be read (a file damaged or gone since it was opened)."""
        return tensor_from(self.raw_bytes(), self.dtype, self.numel, self.shape)

    def key_dict(self) -> dict[str, Any]:
        """The identity fields (schema_gen.KEY_FIELDS), for selectors and alignment keys."""
        return {name: getattr(self, name) for name in KEY_FIELDS}
