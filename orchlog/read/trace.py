"""An opened trace: what a reader yields, as records or as column batches.

Every format reader (orchlog JSONL, the binary stream, Parquet, the legacy
formats) produces `TraceRecord`s or `RecordBatch`es and reports problems as
`Diagnostic`s instead of raising, so one bad line never hides the rest of a
trace. The record types are in orchlog/read/records.py.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from orchlog.read.batch import RecordBatch
from orchlog.read.records import Diagnostic, Location, TraceRecord, identity
from orchlog.read.writers import live_writers

__all__ = ["Diagnostic", "Location", "Trace", "TraceRecord", "identity"]


# Records a batch holds unless its reader is asked for fewer, and the leading values it holds at most.
BATCH_ROWS = 4096
BATCH_VALUES = 1 << 22


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
        batches: Callable[[Trace, int, bool], Iterator[RecordBatch]] | None = None,
        runs: Callable[[Trace, bool], Iterator[RecordBatch | TraceRecord]] | None = None,
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
        self._runs = runs
        # The key a format's records align on when both sides are that format (None: compare's default).
        self.default_key: tuple[str, ...] | None = None
        # The file a look at the trace's start reads: a directory's first member (found when it was opened).
        self.first_file = path

    @property
    def header(self) -> dict[str, Any] | None:
        return self.headers[0] if self.headers else None

    @functools.cached_property
    def writing(self) -> list[tuple[str, int]]:
        """(file, pid) for each file of the trace a live process is still writing (it holds the file's
        lock, orchlog/read/writers.py): what is read of those is the part written so far."""
        return live_writers(self.path)

    @property
    def reads_records(self) -> bool:
        """Whether the format yields records rather than batches (`batches()` then gathers them)."""
        return self._batches is None

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
            source = (rec for batch in self._batches(self, BATCH_ROWS, True) for rec in batch.records())  # type: ignore[misc]
        for rec in self._guarded(source):
            rec.order = order
            order += 1
            yield rec

    def runs(self, tensors: bool = False) -> Iterator[RecordBatch | TraceRecord]:
        """The records iteration gives, in its order, a run at a time: a RecordBatch whose rows are those
        records (`batch.record(i)`, frame checksums included), or a single TraceRecord. A check of every
        record can then be array work over the runs a format reads as columns, and record by record elsewhere
        (`orchlog validate`). `tensors`: the rows' tensor bytes handed over in memory with the run where the
        format reads them apart (Parquet's tensor pages); they stay with their loaders otherwise."""
        if self._records is None:  # iteration itself reads the batches: their rows are its records
            yield from self.batches()
        elif self._runs is not None:
            yield from self._guarded(self._runs(self, tensors))
        else:
            yield from self

    def batches(
        self, rows: int = BATCH_ROWS, values: int = BATCH_VALUES, tensors: bool = True
    ) -> Iterator[RecordBatch]:
        """The records as RecordBatches; when the format yields records, a batch ends at
        `rows` records or `values` inline values, whichever comes first. A format that reads batches
        itself takes `rows` as a hint (the binary stream's first batch then reads no more than it needs).
        `tensors`: whether the caller reads the records' tensors; a format that keeps them apart from the
        summaries (Parquet) then reads them with the batch and hands them over in memory."""
        if self._batches is not None:
            source: Iterator[RecordBatch] = self._batches(self, rows, tensors)
        else:
            parts = chunks(self._records(self), rows, values)  # type: ignore[misc]
            source = (RecordBatch.from_records(chunk) for chunk in parts)
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


def chunks(items: Iterator[TraceRecord], rows: int, values: int) -> Iterator[list[TraceRecord]]:
    """Records in lists of `rows`, or fewer once they hold `values` leading values."""
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
