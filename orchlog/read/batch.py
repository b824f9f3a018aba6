"""RecordBatch: many records as columns, so that comparing a million of them is array work.

A reader may produce batches directly (the orchlog JSONL reader does, from
the native line parser) or yield `TraceRecord`s, which `from_records` packs.
`record(i)` gives one row back as a TraceRecord. Integer key fields hold
`NONE` (-1) where the record has no value: every one of them is >= 0 in the
schema, so -1 is never a real value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from orchlog import kernels
from orchlog.read.records import Location, TraceRecord, tensor_from
from orchlog.records import record
from orchlog.schema_gen import COLUMNS, STATS_FIELDS, ColumnSpec, RecordColumns, Stats
from orchlog.strings import Strings

NONE = -1
STAT_FIELDS = tuple(f.name for f in STATS_FIELDS if f.type == "f64")  # the float stats, in a [n, 5] column
COUNT_FIELDS = tuple(f.name for f in STATS_FIELDS if f.type == "i64")  # the counts, in a [n, 2] column

# Column kinds: one entry per row (the schema's COLUMNS and the tensor's), or a
# ragged list (offsets + flat items).
_ROW = (
    *(c.name for c in COLUMNS),
    "dtype",
    "numel",
    "has_shape",
    "stats",
    "counts",
    "blake3",
    "meta",
    "path",
    "line",
    "offset",
    "row",
    "order",
    "loader",
    "renamed_from",
    "data_buf",
    "data_start",
    "data_len",
)
_RAGGED = (("shape_off", "shape_dims"), ("val_off", "values"))
_COLUMN_SPECS = {c.name: c for c in COLUMNS}
_FLOATS = tuple(c for c in COLUMNS if c.kind == "floats")
_NOT_FLOATS = tuple(c for c in COLUMNS if c.kind != "floats")


def _none_or(v: int) -> int | None:
    return None if v == NONE else int(v)


def _column(c: ColumnSpec, items: list[Any]) -> Any:
    """A schema column from each record's value (None where absent)."""
    if c.kind == "text":
        return Strings.from_values(items)
    if c.kind == "floats":
        out = np.full((len(items), c.length), np.nan, dtype=c.float_dtype)
        for i, v in enumerate(items):
            if v is not None:
                out[i] = v
        return out
    dtype = np.int8 if c.kind == "bool" else np.int64
    return np.fromiter((NONE if v is None else v for v in items), dtype=dtype, count=len(items))


def _cell(c: ColumnSpec, column: Any, i: int) -> Any:
    """One record's value of a schema column (None where absent); a floats column comes as
    RecordBatch.floats_f64 gives it."""
    if c.kind == "text":
        return column[i]
    if c.kind == "floats":
        row = column[i]
        # A first non-NaN settles it.
        return None if row[0] != row[0] and np.isnan(row).all() else row.copy()
    value = column.item(i)  # a Python int, without a NumPy scalar on the way
    return None if value == NONE else (value if c.kind == "int" else bool(value))


def _objects(items: Iterable[Any]) -> np.ndarray:
    items = list(items)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def ragged_take(off: np.ndarray, flat: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows idx of a ragged column: new offsets and the gathered items."""
    starts = off[idx]
    lengths = off[idx + 1] - starts
    new_off = np.zeros(len(idx) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_off[1:])
    if new_off[-1] == 0:
        return new_off, flat[:0].copy()
    gather = np.repeat(starts - new_off[:-1], lengths) + np.arange(new_off[-1], dtype=np.int64)
    return new_off, flat[gather]


class InlineBytes:
    """A loader for tensor bytes already in memory: a read-only view, no copy; `readinto` copies them out."""

    __slots__ = ("buffer", "start", "nbytes")

    def __init__(self, buffer: Any, start: int, nbytes: int) -> None:
        self.buffer, self.start, self.nbytes = buffer, start, nbytes

    def __call__(self) -> memoryview:
        return memoryview(self.buffer).cast("B")[self.start : self.start + self.nbytes].toreadonly()

    def readinto(self, buffer: memoryview) -> None:
        buffer[: self.nbytes] = self()


def _concat(columns: list[Any]) -> Any:
    if isinstance(columns[0], Strings):
        return Strings.concat(columns)
    return np.concatenate(columns)


class FrameChecks(Protocol):
    """The frame checksums of a batch's rows, as a binary stream's reader found them."""

    def sound(self) -> np.ndarray:
        """Per row: its checksum was checked here, a batch at a time, and is right, or it has none."""

    def check_of(self, i: int) -> Callable[[], str | None] | None:
        """Row i's check as its record carries it (TraceRecord.frame_check), None for a row with none."""


class JoinedChecks:
    """The frame checksums of batches joined end to end (`concat`): each part's own; a part's rows without
    any have nothing to check."""

    def __init__(self, parts: Sequence[tuple[FrameChecks | None, int]]) -> None:
        self.parts = list(parts)
        self.starts = np.cumsum([0] + [rows for _, rows in self.parts])

    def sound(self) -> np.ndarray:
        return np.concatenate([np.ones(rows, dtype=bool) if c is None else c.sound() for c, rows in self.parts])

    def check_of(self, i: int) -> Callable[[], str | None] | None:
        part = int(np.searchsorted(self.starts, i, side="right")) - 1
        checks = self.parts[part][0]
        return None if checks is None else checks.check_of(i - int(self.starts[part]))


@record
class RecordBatch(RecordColumns):
    """The schema's COLUMNS (RecordColumns: text as Strings, None where absent;
    numbers as int64, NONE where absent), and the tensor's columns below."""

    dtype: Strings  # None where unknown
    numel: np.ndarray  # int64, NONE when unknown
    has_shape: np.ndarray  # bool
    shape_off: np.ndarray  # int64 [n+1]
    shape_dims: np.ndarray  # int64
    val_off: np.ndarray  # int64 [n+1]
    values: np.ndarray  # float64: the leading values each record carries
    stats: np.ndarray  # float64 [n, 5] in STAT_FIELDS order, NaN when absent
    counts: np.ndarray  # int64 [n, 2] in COUNT_FIELDS order (nan_count, inf_count); NONE when absent
    blake3: np.ndarray  # S64, b"" when absent
    meta: np.ndarray  # object: dict or None (None for empty)
    path: Strings
    line: np.ndarray  # int64, NONE when the location is a byte offset
    offset: np.ndarray  # int64, NONE when the location is a line
    order: np.ndarray  # int64: position in the trace's file order
    loader: np.ndarray  # object: Callable[[], bytes] or None
    renamed_from: Strings | None = None  # the checkpoint name before a name map, None when unchanged
    # Tensor bytes already in memory (a binary stream's small records, read a chunk at a time):
    # the object holding them (any buffer, shared by the rows of a chunk), where they start and
    # how many bytes (NONE: not in memory; the row may still have a loader).
    data_buf: np.ndarray | None = None  # object
    data_start: np.ndarray | None = None  # int64
    data_len: np.ndarray | None = None  # int64
    row: np.ndarray | None = None  # int64: a Parquet file's row number (NONE elsewhere)
    # A binary stream's frame checksums for these rows, as read (`orchlog validate --verify-hashes`): kept by
    # `concat`, not by `take` (a selection of rows is not checked again).
    frame_checks: FrameChecks | None = None

    def __post_init__(self) -> None:
        n = len(self.checkpoint)
        if self.row is None:
            self.row = np.full(n, NONE, dtype=np.int64)
        if self.renamed_from is None:
            self.renamed_from = Strings.repeat(None, n)
        if self.data_buf is None:
            self.data_buf = np.full(n, None, dtype=object)
            self.data_start = np.zeros(n, dtype=np.int64)
            self.data_len = np.full(n, NONE, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.checkpoint)

    # ------------------------------------------------------------ rows

    def n_values(self) -> np.ndarray:
        return np.diff(self.val_off)

    def row_values(self, i: int) -> np.ndarray:
        return self.values[self.val_off[i] : self.val_off[i + 1]]

    def shape_of(self, i: int) -> tuple[int, ...] | None:
        if not self.has_shape[i]:
            return None
        return tuple(int(d) for d in self.shape_dims[self.shape_off[i] : self.shape_off[i + 1]])

    def has_full_values(self) -> np.ndarray:
        """Rows whose leading values are the whole tensor."""
        full: np.ndarray = (self.numel >= 0) & (self.n_values() == self.numel)
        return full

    def has_data(self) -> np.ndarray:
        """Rows whose whole tensor is at hand: tensor bytes in memory or to load, or every value inline."""
        assert self.data_len is not None, "__post_init__ fills it"
        loadable = ~kernels.is_none(self.loader)
        at_hand: np.ndarray = loadable | (self.data_len >= 0) | self.has_full_values()
        return at_hand

    def loader_of(self, i: int, own: bool = False) -> Callable[[], bytes | memoryview] | None:
        """Row i's tensor bytes as a loader (the bytes in memory, or the format's own loader), or None.
        With `own`, bytes in memory are copied out of the buffer they were read into (see `record`)."""
        assert self.data_buf is not None and self.data_start is not None and self.data_len is not None, (
            "__post_init__ fills them"
        )
        if self.data_len[i] >= 0:
            start, nbytes = int(self.data_start[i]), int(self.data_len[i])
            if own:
                return InlineBytes(bytes(InlineBytes(self.data_buf[i], start, nbytes)()), 0, nbytes)
            return InlineBytes(self.data_buf[i], start, nbytes)
        loader: Callable[[], bytes | memoryview] | None = self.loader[i]
        return loader

    def location(self, i: int) -> Location:
        path = self.path[i]
        assert path is not None, "every record has a path"
        assert self.row is not None, "__post_init__ fills it"
        return Location(path, line=_none_or(self.line[i]), offset=_none_or(self.offset[i]), row=_none_or(self.row[i]))

    def record(self, i: int, own: bool = False) -> TraceRecord:
        """Row i as a record. `own`: for a record kept after its batch is gone, its tensor bytes copied out
        of the read window they lie in; a kept record would otherwise keep the whole window (16 MiB of a
        binary trace) from being reused, and one kept per token held every window of a run at once."""
        return TraceRecord(
            **{c.name: _cell(c, getattr(self, c.name), i) for c in _NOT_FLOATS},
            **{c.name: _cell(c, self.floats_f64(c.name), i) for c in _FLOATS},
            dtype=self.dtype[i],
            shape=self.shape_of(i),
            numel=_none_or(self.numel[i]),
            values=self.row_values(i).copy(),
            stats=self.stats_of(i),
            blake3=self.blake3[i].decode(errors="replace") or None,
            meta=dict(self.meta[i] or {}),
            location=self.location(i),
            order=int(self.order[i]),
            loader=self.loader_of(i, own),
            frame_check=None if self.frame_checks is None else self.frame_checks.check_of(i),
        )

    def stats_of(self, i: int) -> Stats | None:
        """Row i's stats as its record holds them (None when the row says none)."""
        floats, counts = self.stats[i].tolist(), self.counts[i].tolist()  # Python numbers: NaN is v != v
        if counts[0] == NONE and not any(v == v for v in floats):
            return None
        said: dict[str, Any] = {f: None if v != v else v for f, v in zip(STAT_FIELDS, floats)}
        said.update((f, max(v, 0)) for f, v in zip(COUNT_FIELDS, counts))
        return Stats(**said)

    def cell(self, name: str, i: int) -> Any:
        """Row i's value of the schema column `name`, as its record holds it (None where absent)."""
        spec = _COLUMN_SPECS[name]
        return _cell(spec, self.floats_f64(name) if spec.kind == "floats" else getattr(self, name), i)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_floats_f64", None)  # made again where needed: not worth its bytes in a pickle (Ray)
        state["frame_checks"] = None  # the read window's, and only validate asks for them
        return state

    def floats_f64(self, name: str) -> np.ndarray:
        """The floats column `name` as records hold it (f64, whatever the column holds), made once per batch:
        a damaged file's signalling NaN is quieted by the cast silently (NumPy would print "invalid value
        encountered in cast"), and the guard against that costs once a batch, not 2.6 us a record."""
        made: dict[str, np.ndarray] = self.__dict__.setdefault("_floats_f64", {})
        wide = made.get(name)
        if wide is None:
            column = getattr(self, name)
            with np.errstate(invalid="ignore"):
                wide = made[name] = column if column.dtype == np.float64 else column.astype(np.float64)
        return wide

    def tensor_of(self, i: int) -> np.ndarray | None:
        """Row i's whole tensor, as `record(i).tensor()` gives it, without making the record."""
        loader = self.loader_of(i)
        raw = None if loader is None else loader()
        return tensor_from(raw, self.dtype[i], _none_or(self.numel[i]), self.shape_of(i))

    def records(self) -> Iterable[TraceRecord]:
        for i in range(len(self)):
            yield self.record(i)

    # ------------------------------------------------------------ reshaping

    def take(self, idx: Sequence[int] | np.ndarray) -> RecordBatch:
        idx = np.asarray(idx, dtype=np.int64)
        cols = {name: getattr(self, name)[idx] for name in _ROW}
        for off, flat in _RAGGED:
            cols[off], cols[flat] = ragged_take(getattr(self, off), getattr(self, flat), idx)
        return RecordBatch(**cols)

    def take_owned(self, idx: Sequence[int] | np.ndarray) -> RecordBatch:
        """`take`, with the rows' tensor bytes in memory copied into one buffer of their own: rows kept
        after their batch is gone would otherwise keep the whole read window they lie in (see `record`)."""
        out = self.take(idx)
        assert out.data_buf is not None and out.data_start is not None and out.data_len is not None, (
            "__post_init__ fills them"
        )
        inline = np.flatnonzero(out.data_len >= 0)
        if not len(inline):
            return out
        lengths = out.data_len[inline]
        starts = np.zeros(len(inline) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        owned = np.empty(int(starts[-1]), dtype=np.uint8)
        for k, row in enumerate(inline.tolist()):
            owned[starts[k] : starts[k + 1]] = InlineBytes(
                out.data_buf[row], int(out.data_start[row]), int(lengths[k])
            )()
        holder = np.empty(1, dtype=object)
        holder[0] = owned
        out.data_buf[inline] = holder
        out.data_start[inline] = starts[:-1]
        return out

    def tail(self, start: int) -> RecordBatch:
        """Rows start.. as views of this batch's columns: what take(range) gives, without the copies (the
        aligner keeps the unmatched end of a batch at every round)."""
        cols = {name: getattr(self, name)[start:] for name in _ROW}
        for off, flat in _RAGGED:
            offsets = getattr(self, off)
            cols[off], cols[flat] = offsets[start:] - offsets[start], getattr(self, flat)[offsets[start] :]
        return RecordBatch(**cols)

    @staticmethod
    def concat(batches: Sequence[RecordBatch]) -> RecordBatch:
        batches = [b for b in batches if len(b)] or list(batches[:1])
        if len(batches) == 1:
            return batches[0]
        cols = {name: _concat([getattr(b, name) for b in batches]) for name in _ROW}
        for off, flat in _RAGGED:
            offsets, items, base = [np.zeros(1, dtype=np.int64)], [], 0
            for b in batches:
                offsets.append(getattr(b, off)[1:] + base)
                items.append(getattr(b, flat))
                base += int(getattr(b, off)[-1])
            cols[off], cols[flat] = np.concatenate(offsets), np.concatenate(items)
        if any(b.frame_checks is not None for b in batches):
            cols["frame_checks"] = JoinedChecks([(b.frame_checks, len(b)) for b in batches])
        return RecordBatch(**cols)

    @staticmethod
    def empty() -> RecordBatch:
        return RecordBatch.from_records([])

    # ------------------------------------------------------------ building

    @staticmethod
    def from_records(records: Sequence[TraceRecord]) -> RecordBatch:
        n = len(records)

        def ints(get: Callable[[TraceRecord], int | None]) -> np.ndarray:
            return np.fromiter((NONE if (v := get(r)) is None else v for r in records), dtype=np.int64, count=n)

        def ragged(get: Callable[[TraceRecord], Any], dtype: type[np.generic]) -> tuple[np.ndarray, np.ndarray]:
            parts = [np.asarray(get(r) if get(r) is not None else (), dtype=dtype) for r in records]
            off = np.zeros(n + 1, dtype=np.int64)
            np.cumsum([len(p) for p in parts], out=off[1:])
            return off, (np.concatenate(parts) if parts else np.zeros(0, dtype=dtype))

        stats = np.full((n, len(STAT_FIELDS)), np.nan)
        counts = np.full((n, len(COUNT_FIELDS)), NONE, dtype=np.int64)
        for i, r in enumerate(records):
            if r.stats is not None:
                stats[i] = [np.nan if (v := getattr(r.stats, f)) is None else v for f in STAT_FIELDS]
                counts[i] = [getattr(r.stats, f) for f in COUNT_FIELDS]
        shape_off, shape_dims = ragged(lambda r: r.shape, np.int64)
        val_off, values = ragged(lambda r: r.values, np.float64)
        locs = [r.location or Location("") for r in records]
        return RecordBatch(
            **{c.name: _column(c, [getattr(r, c.name) for r in records]) for c in COLUMNS},
            dtype=Strings.from_values(r.dtype for r in records),
            numel=ints(lambda r: r.numel),
            has_shape=np.array([r.shape is not None for r in records], dtype=bool),
            shape_off=shape_off,
            shape_dims=shape_dims,
            val_off=val_off,
            values=values,
            stats=stats,
            counts=counts,
            blake3=np.array([(r.blake3 or "").encode() for r in records], dtype="S64"),
            meta=_objects(r.meta or None for r in records),
            path=Strings.from_values(loc.path for loc in locs),
            line=ints(lambda r: r.location.line if r.location else None),
            offset=ints(lambda r: r.location.offset if r.location else None),
            row=ints(lambda r: r.location.row if r.location else None),
            order=ints(lambda r: r.order),
            loader=_objects(r.loader for r in records),
        )


def coalesced(batches: Iterable[RecordBatch], rows: int, values: int) -> Iterator[RecordBatch]:
    """Consecutive small batches as one of up to `rows` records and `values` leading values: a directory of
    many small trace files gives a batch per file, and every batch costs a consumer a round (the walk's
    is milliseconds). A batch that holds tensor bytes in memory passes as it came, after what was held:
    merging it would keep its read window alive longer."""
    held: list[RecordBatch] = []
    held_rows = held_values = 0
    for batch in batches:
        in_memory = batch.data_len is not None and bool((batch.data_len >= 0).any())
        if held and (in_memory or held_rows + len(batch) > rows or held_values + len(batch.values) > values):
            yield RecordBatch.concat(held)
            held, held_rows, held_values = [], 0, 0
        if in_memory or len(batch) >= rows:
            yield batch
            continue
        held.append(batch)
        held_rows += len(batch)
        held_values += len(batch.values)
    if held:
        yield RecordBatch.concat(held)
