"""What a reader yields: records with their keys, summaries and lazily loaded tensors.

Every format reader (orchlog JSONL, the binary stream, Parquet, the legacy
formats) produces `TraceRecord`s and reports problems as `Diagnostic`s
instead of raising, so one bad line never hides the rest of a trace.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator

import numpy as np

from orchlog.schema_gen import Stats


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


@dataclasses.dataclass
class TraceRecord:
    """One record, whatever format it came from. Absent information is None."""

    checkpoint: str
    team: str = ""
    token_idx: int | None = None
    layer: int | None = None
    stage: str | None = None
    step: int | None = None
    rank: int = 0
    world_size: int = 1
    seq: int | None = None  # the emitter's execution-order counter, when the format has one
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

    @property
    def has_data(self) -> bool:
        return self.loader is not None

    def raw_bytes(self) -> bytes | memoryview | None:
        """The full tensor bytes as stored (little-endian, own dtype), or None without data."""
        return None if self.loader is None else self.loader()

    def tensor(self) -> np.ndarray | None:
        """The full tensor as a shaped array; bf16 is widened exactly to f32. None without data."""
        raw = self.raw_bytes()
        if raw is None or self.dtype is None:
            return None
        from orchlog.encoding import dtypes

        flat = dtypes.from_bytes(raw, self.dtype)
        if self.dtype == "bf16":
            flat = dtypes.widen(flat, "bf16")
        return flat.reshape(self.shape if self.shape is not None else (-1,))

    def key_dict(self) -> dict[str, Any]:
        """The identity fields, for selectors and alignment keys."""
        return {
            "checkpoint": self.checkpoint,
            "team": self.team,
            "token_idx": self.token_idx,
            "layer": self.layer,
            "stage": self.stage,
            "step": self.step,
            "rank": self.rank,
            "seq": self.seq,
        }


class Trace:
    """An opened trace: iterate it for records; header and diagnostics fill in as you go."""

    def __init__(self, path: str, fmt: str, records: Callable[["Trace"], Iterator[TraceRecord]]) -> None:
        self.path = path
        self.format = fmt
        self.headers: list[dict[str, Any]] = []
        self.diagnostics: list[Diagnostic] = []
        self._records = records

    @property
    def header(self) -> dict[str, Any] | None:
        return self.headers[0] if self.headers else None

    def report(self, location: Location, message: str, fatal: bool = False) -> None:
        self.diagnostics.append(Diagnostic(location, message, fatal))

    def __iter__(self) -> Iterator[TraceRecord]:
        order = 0
        for rec in self._records(self):
            rec.order = order
            order += 1
            yield rec

    def __repr__(self) -> str:
        return f"Trace({self.path!r}, format={self.format!r})"
