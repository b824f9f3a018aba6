"""What a reader yields: records with their keys, summaries and lazily loaded tensors.

Every format reader (orchlog JSONL, the binary stream, Parquet, the legacy
formats) produces `TraceRecord`s and reports problems as `Diagnostic`s
instead of raising, so one bad line never hides the rest of a trace.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from orchlog.schema_gen import COLUMNS, KEY_FIELDS, RecordFields, Stats

if TYPE_CHECKING:
    from orchlog.read.batch import RecordBatch


@dataclasses.dataclass(frozen=True)
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


@dataclasses.dataclass(frozen=True)
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
    absent or None takes the field's default, floats become arrays."""
    out = {}
    for c in COLUMNS:
        value = values.get(c.name)
        if value is None:
            value = _DEFAULTS[c.name]
        elif c.kind == "floats":
            value = np.asarray(value, dtype=np.float64)
        out[c.name] = value
    return out


@dataclasses.dataclass
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
        raw = self.raw_bytes()
        from orchlog.read.fields import data_fits

        if (
            raw is None
            or self.dtype is None
            or not data_fits(memoryview(raw).nbytes, self.dtype, self.numel, self.shape)
        ):
            return None
        from orchlog.encoding import dtypes

        flat = dtypes.from_bytes(raw, self.dtype)
        if self.dtype == "bf16":
            flat = dtypes.widen(flat, "bf16")
        return flat.reshape(self.shape if self.shape is not None else (-1,))

    def key_dict(self) -> dict[str, Any]:
        """The identity fields (schema_gen.KEY_FIELDS), for selectors and alignment keys."""
        return {name: getattr(self, name) for name in KEY_FIELDS}


class Trace:
    """An opened trace: iterate it for records (or `batches()` for columns); header and diagnostics fill in as you go.

    A format gives either `records` (a generator of TraceRecords) or `batches`
    (a generator of RecordBatches); both ways of reading work on either.
    Readers advance `bytes_read` through the file on disk so that callers can
    show progress and keep two traces in step.
    """

    def __init__(
        self,
        path: str,
        fmt: str,
        records: Callable[[Trace], Iterator[TraceRecord]] | None = None,
        *,
        batches: Callable[[Trace], Iterator[RecordBatch]] | None = None,
        size: int | None = None,
    ) -> None:
        self.path = path
        self.format = fmt
        self.headers: list[dict[str, Any]] = []
        self.diagnostics: list[Diagnostic] = []
        self.bytes_read = 0
        self.size = size if size is not None else _file_size(path)
        self._records = records
        self._batches = batches
        # The key a format's records align on when both sides are that format (None: compare's default).
        self.default_key: tuple[str, ...] | None = None

    @property
    def header(self) -> dict[str, Any] | None:
        return self.headers[0] if self.headers else None

    @functools.cached_property
    def writing(self) -> list[tuple[str, int]]:
        """(file, pid) for each file of the trace a live process is still writing (it holds the file's
        lock, orchlog/read/writers.py): what is read of those is the part written so far."""
        from orchlog.read.writers import live_writers

        return live_writers(self.path)

    def report(self, location: Location, message: str, fatal: bool = False) -> None:
        self.diagnostics.append(Diagnostic(location, message, fatal))

    def progress(self) -> float:
        """How far through the trace's bytes on disk the reader has got, from 0 to 1."""
        return min(1.0, self.bytes_read / self.size) if self.size else 0.0

    def __iter__(self) -> Iterator[TraceRecord]:
        order = 0
        if self._records is not None:
            source: Iterator[TraceRecord] = self._records(self)
        else:
            source = (rec for batch in self._batches(self) for rec in batch.records())  # type: ignore[misc]
        for rec in self._guarded(source):
            rec.order = order
            order += 1
            yield rec

    def batches(self, rows: int = 4096, values: int = 1 << 22) -> Iterator[RecordBatch]:
        """The records as RecordBatches; when the format yields records, a batch ends at
        `rows` records or `values` inline values, whichever comes first."""
        from orchlog.read.batch import RecordBatch

        if self._batches is not None:
            source: Iterator[RecordBatch] = self._batches(self)
        else:
            chunks = _chunks(self._records(self), rows, values)  # type: ignore[misc]
            source = (RecordBatch.from_records(chunk) for chunk in chunks)
        order = 0
        for batch in self._guarded(source):
            if len(batch):
                batch.order = np.arange(order, order + len(batch), dtype=np.int64)
                order += len(batch)
                yield batch

    def _guarded(self, source: Iterator[Any]) -> Iterator[Any]:
        """The format's items; an error the format did not turn into a diagnostic ends this file, not the run.

        Readers report bad records themselves and carry on; this is the net under them, for
        the input nobody foresaw (and for files that vanish or fail on disk while being read)."""
        try:
            yield from source
        except Exception as exc:
            if isinstance(exc, OSError):
                why = f"cannot read on ({exc})"
            else:
                why = f"{READER_FAILED} ({type(exc).__name__}: {str(exc)[:200]}; please report it)"
            where = Location(self.path, offset=self.bytes_read or None)
            self.report(where, f"{why}; the rest of the file was not read", fatal=True)

    def __repr__(self) -> str:
        return f"Trace({self.path!r}, format={self.format!r})"


# The words of a diagnostic for an error no reader foresaw: a bug to report (the fuzz tests look for them).
READER_FAILED = "the reader failed unexpectedly"


def _chunks(items: Iterator[TraceRecord], rows: int, values: int) -> Iterator[list[TraceRecord]]:
    chunk: list[TraceRecord] = []
    held = 0
    for item in items:
        chunk.append(item)
        held += 0 if item.values is None else len(item.values)
        if len(chunk) >= rows or held >= values:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


def _file_size(path: str) -> int | None:
    try:
        return os.path.getsize(path) if os.path.isfile(path) else None
    except OSError:
        return None
