"""Read Parquet traces: selections pushed down to row groups, tensors read only when asked.

    trace = orchlog.parquet.read("run.parquet", checkpoint="attn_norm", layer=range(0, 4))
    for rec in trace:
        x = rec.tensor()          # reads rec's row group, once; zero-copy where aligned

A scan reads the summary columns only (keys, values, stats, blake3, meta) of
the row groups whose statistics and partition values can match; a record's
tensor is read when `raw_bytes()`/`tensor()` is called, together with the
rest of its row group (the smallest unit Parquet reads), which stays cached
until a tensor of another row group is asked for, so reading in file order
reads every row group once and memory scales with the row group, not the trace.

Files of the first layout (every column named after its field, dtype names
such as `f32`) are read as they are: each file's columns are projected onto
this layout's names as they are scanned.
"""

from __future__ import annotations

import functools
import json
import os
import struct
import threading
import urllib.parse
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from orchlog import schema_gen
from orchlog.errors import OrchlogError
from orchlog.parquet.columnar import batch_of, list_column, meta_from_pairs
from orchlog.parquet.filters import Selection, selection
from orchlog.parquet.footer import (
    PIECE_KEY,
    Footer,
    FooterError,
    assemble,
    find_pieces,
    parse_footer,
    read_footer,
)
from orchlog.parquet.schema import (
    ARROW_SCHEMA,
    COLUMN_OF,
    DATA_COLUMN,
    DATA_NULLS_KEY,
    DTYPE_COLUMN,
    FIELD_OF,
    STATS_COLUMNS,
    SUMMARY_COLUMNS,
    dtype_name,
    file_columns,
    headers_from,
    schema_version_of,
)
from orchlog.read import fields
from orchlog.read.batch import RecordBatch
from orchlog.read.files import open_regular
from orchlog.read.trace import Location, Trace, TraceRecord, identity
from orchlog.schema_gen import COLUMNS, Stats

FORMAT_NAME = "orchlog-parquet"
MAGIC = b"PAR1"
# Without these fields a file is some other table, not a trace.
_REQUIRED = ("checkpoint", "dtype", "shape", "numel", "blake3")
_VALUES = COLUMN_OF["values"]
_ROW = "__orchlog_row"  # row number within its row group, carried through filtering
_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_LOCAL = pafs.LocalFileSystem()
_FORMAT = ds.ParquetFileFormat()
# What damaged pages raise: pyarrow's errors (ArrowInvalid, OSError for codecs), and from to_pylist
# UnicodeDecodeError (a string that is not UTF-8) or IndexError (offsets past the data).
_DAMAGE = (pa.ArrowException, OSError, ValueError, IndexError, KeyError)


def read(
    path: str | os.PathLike[str], where: str | None = None, *, filter: ds.Expression | None = None, **fields: Any
) -> Trace:
    """Open a Parquet trace (a file, or a directory of them, hive partitions allowed), keeping selected rows.

    `where` is selector text (`layer=0-3,token=5,checkpoint=attn_*`); keywords
    select on checkpoint, team, token_idx, layer, stage, step, rank or seq with a
    value, a list, a `range` or a glob; `filter` is any pyarrow dataset expression.
    """
    return _open(Path(path), selection(where, filter, **fields))


def open_parquet(path: Path) -> Trace:
    """The format registry's entry: the whole file, every row."""
    return _open(path, selection())


def _open(root: Path, sel: Selection) -> Trace:
    if not root.exists():
        raise OrchlogError(f"{root} does not exist")
    files: list[_File] = []
    candidates, problems = _parquet_files(root) if root.is_dir() else ([root], [])
    for candidate in candidates:
        try:
            files.append(_File(candidate))
        except OrchlogError as exc:
            if not root.is_dir():
                raise
            problems.append((candidate, str(exc)))
    if root.is_dir() and not files:
        raise OrchlogError(f"{root}: no Parquet trace files inside")
    cache = _RowGroupCache()

    def records(trace: Trace) -> Iterator[TraceRecord]:
        for f in files:
            yield from f.records(sel, cache, trace)

    def batches(trace: Trace, rows: int, tensors: bool) -> Iterator[RecordBatch]:
        for f in files:
            for batch in f.batches(sel, cache, trace, tensors):
                for start in range(0, len(batch), rows):
                    yield batch if len(batch) <= rows else batch.take(np.arange(start, min(start + rows, len(batch))))

    def runs(trace: Trace, tensors: bool) -> Iterator[RecordBatch]:  # iteration's records, a row group at a time
        for f in files:
            yield from f.batches(sel, cache, trace, tensors)

    trace = Trace(str(root), FORMAT_NAME, records, batches=batches, runs=runs)
    for f in files:
        trace.headers.extend(f.headers)
        for problem in f.problems:
            trace.report(Location(f.path), problem)
        if f.schema_version is not None and f.schema_version > schema_gen.SCHEMA_VERSION:
            trace.report(
                Location(f.path),
                f"written with schema {f.schema_version}, newer than this orchlog's "
                f"{schema_gen.SCHEMA_VERSION}; fields this version does not know are ignored",
            )
        if f.layout_version is not None and f.layout_version > schema_gen.PARQUET_LAYOUT_VERSION:
            trace.report(
                Location(f.path),
                f"written in Parquet layout {f.layout_version}, newer than this orchlog's "
                f"{schema_gen.PARQUET_LAYOUT_VERSION}; columns this version does not know are ignored",
            )
    for where, why in problems:
        trace.report(Location(str(where)), f"not read: {why}")
    return trace


def _parquet_files(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Parquet files below root in name order, and the other files with why they are not read.

    Hidden and `_`-prefixed names (`_SUCCESS`, `_metadata`) are skipped, as Hive tools do.
    """
    found, others = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
        for name in sorted(n for n in filenames if not n.startswith((".", "_"))):
            path = Path(dirpath) / name
            try:
                with open_regular(path) as f:
                    is_parquet = f.read(len(MAGIC)) == MAGIC
            except (OSError, OrchlogError) as exc:
                others.append((path, f"cannot read it ({getattr(exc, 'strerror', None) or exc})"))
                continue
            if is_parquet:
                found.append(path)
            else:
                others.append((path, "not a Parquet file (open_trace reads every format)"))
    return found, others


def partition_values(path: Path) -> dict[str, Any]:
    """Record fields named by `name=value` directories in a path (hive style), typed by the schema.

    The name is a column's (`tp_rank=1`) or its field's (`rank=1`).
    """
    values: dict[str, Any] = {}
    for part in path.resolve().parent.parts:
        key, eq, raw = part.partition("=")
        field = FIELD_OF.get(key, key if key in COLUMN_OF else None)
        if not eq or field is None:
            continue
        text = urllib.parse.unquote(raw)
        column_type = ARROW_SCHEMA.field(COLUMN_OF[field]).type
        if text == _HIVE_NULL:
            values[field] = None
        elif pa.types.is_integer(column_type):
            try:
                values[field] = int(text)
            except ValueError:
                continue  # not ours: a directory that happens to share a field's name
        elif pa.types.is_string(column_type):
            values[field] = text
    return values


class _File:
    """One Parquet file of a trace: its footer, partition values and row groups."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.problems: list[str] = []  # what the footer holds that cannot be used, for the trace's diagnostics
        # A file without its footer (a writer killed, a disk full) is read from the pieces it was
        # written in (pieces.py) through pyarrow.parquet.ParquetFile; a whole file through a fragment.
        self.recovered: pq.ParquetFile | None = None
        # One ParquetFile must not read from two threads at once (the read-ahead reads tensors while
        # the walk reads summaries): reads of a recovered file take turns.
        self._recovered_lock = threading.Lock()
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            try:
                # Checked here first: pyarrow aborts the process on some damaged footers (footer.py).
                self.footer = read_footer(f, size)
                if PIECE_KEY in self.footer.key_values:
                    raise FooterError("no footer: the writer stopped before closing the file")
            except FooterError as exc:
                self.footer, self.recovered = _recover(path, f, size, exc)
                self.problems.append(
                    f"{exc}; read the {len(self.footer.row_groups)} row groups written whole (up to byte "
                    f"{self.footer.start}; anything after them was cut short)"
                )
        try:
            if self.recovered is None:
                self.fragment = _FORMAT.make_fragment(self.path, filesystem=_LOCAL)
                self.fragment.ensure_complete_metadata()
                file_schema = self.fragment.physical_schema
            else:
                file_schema = self.recovered.schema_arrow
        except (pa.ArrowException, OSError) as exc:
            raise OrchlogError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
        try:
            self.headers = [fields.header(h) for h in headers_from(self.footer.key_values)]
        except (ValueError, RecursionError) as exc:
            self.headers = []
            self.problems.append(f"the run headers in the footer are not JSON ({str(exc)[:120]}); ignored")
        self.schema_version = schema_version_of(self.footer.key_values)
        self.layout_version = schema_version_of(self.footer.key_values, schema_gen.PARQUET_LAYOUT_KEY)
        self.columns = file_columns(file_schema.names)  # field -> this file's column
        self.current_layout = self.columns == COLUMN_OF
        # field -> value of the hive partitions that fill a column the file lacks
        partition = {f: v for f, v in partition_values(path).items() if self.columns[f] not in file_schema.names}
        if self.recovered is not None:
            partition = {}  # read without a fragment, which is what carries partition values
        from_path = [ARROW_SCHEMA.field(COLUMN_OF[f]).with_name(self.columns[f]).with_nullable(True) for f in partition]
        self.schema = pa.schema([*file_schema, *from_path])
        missing = [self.columns[f] for f in _REQUIRED if self.columns[f] not in self.schema.names]
        if missing:
            raise OrchlogError(f"{path}: a Parquet file but not an orchlog trace (no column {', '.join(missing)})")
        if partition:
            self.fragment = _FORMAT.make_fragment(
                self.path,
                filesystem=_LOCAL,
                partition_expression=_equals_all({self.columns[f]: v for f, v in partition.items()}),
            )
        # This layout's summary column -> this file's column that holds it.
        self.summary_columns = {
            c: self.columns[FIELD_OF[c]] for c in SUMMARY_COLUMNS if self.columns[FIELD_OF[c]] in self.schema.names
        }
        groups = self.footer.row_groups
        self.row_group_count = len(groups)
        self.row_group_starts = np.concatenate(([0], np.cumsum([g.num_rows for g in groups], dtype=np.int64)))
        self._data_column = self.columns["data"]
        self._has_data = any(leaf.path == (self._data_column,) for leaf in self.footer.leaves)
        self._data_nulls: list[int] | None = None  # from the footer's key-value metadata, read on first use

    def data_nulls(self, rg: int) -> int | None:
        """Null tensors in a row group, from the footer; None when the footer does not say.

        orchlog's writers always record it; for files from other writers that do not,
        telling which rows have tensors means reading the row group's tensors.
        """
        if not self._has_data:
            return self.footer.row_groups[rg].num_rows
        counted = self.footer.null_count(rg, self._data_column)
        if counted is not None:
            return counted
        if self._data_nulls is None:  # orchlog's writers keep no statistics on the tensor column
            self._data_nulls = _footer_data_nulls(self.footer.key_values, self.row_group_count)
        return self._data_nulls[rg] if self._data_nulls else None

    def records(self, sel: Selection, cache: _RowGroupCache, trace: Trace) -> Iterator[TraceRecord]:
        """The selected rows; a row group whose pages are damaged is reported and skipped, a bad row too."""
        for rg, table in self._tables(sel, cache, trace):
            try:
                rows = list(self._records_of(table, rg, cache, trace))
            except _DAMAGE as exc:
                self._report_damaged(trace, rg, exc)
                continue
            yield from rows

    def batches(self, sel: Selection, cache: _RowGroupCache, trace: Trace, tensors: bool) -> Iterator[RecordBatch]:
        """The selected rows a row group at a time: column by column (columnar.py), or through the records
        where a row needs their checks; reported and skipped as `records` reports and skips them. With
        `tensors`, the row group's tensors are read with it and handed over in memory (the compare then
        measures them in one native call, as it does a binary stream's)."""
        for rg, table in self._tables(sel, cache, trace):
            if not table.num_rows:
                continue
            try:
                rows = int(self.row_group_starts[rg]) + table.column(_ROW).to_numpy()
                batch = batch_of(table, self.path, rows)
                if batch is None:
                    batch = RecordBatch.from_records(list(self._records_of(table, rg, cache, trace)))
                else:
                    has = self._tensor_rows(table, rg, cache)
                    if tensors:
                        has = self._add_tensors(batch, table, rg, cache, has)
                    self._add_loaders(batch, table, rg, cache, has)
            except _DAMAGE as exc:
                self._report_damaged(trace, rg, exc)
                continue
            yield batch

    def _tables(self, sel: Selection, cache: _RowGroupCache, trace: Trace) -> Iterator[tuple[int, pa.Table]]:
        """(row group, its selected rows' summary columns and row numbers), damaged ones reported and skipped."""
        try:
            pieces = self._row_groups(sel)
        except _DAMAGE as exc:
            trace.report(Location(self.path), f"row groups unreadable ({_first_line(exc)}); file skipped", fatal=True)
            return
        cache.plan(self, [rg for rg, _ in pieces])
        for rg, read_summary in pieces:
            try:
                table = read_summary()
                table = sel.apply(table.append_column(_ROW, pa.array(np.arange(table.num_rows))))
            except _DAMAGE as exc:
                self._report_damaged(trace, rg, exc)
                continue
            yield rg, table

    def _report_damaged(self, trace: Trace, rg: int, exc: BaseException) -> None:
        first = int(self.row_group_starts[rg])
        trace.report(
            Location(self.path, row=first),
            f"row group {rg} is damaged ({_first_line(exc)}); its "
            f"{int(self.row_group_starts[rg + 1]) - first} rows skipped",
        )

    def _add_tensors(
        self, batch: RecordBatch, table: pa.Table, rg: int, cache: _RowGroupCache, has: np.ndarray
    ) -> np.ndarray:
        """The tensors of the rows `has` (those that hold one), in memory where they lie in the row group's
        buffer as a loader would hand them over (there, within the buffer, aligned for their dtype). Returns
        the rows left without: they get a loader, which says what is wrong when called."""
        if not len(has):
            return has
        try:
            chunks = cache.tensors(self, rg)
        except OSError:
            return has  # the loaders report it, record by record
        left = np.ones(len(batch), dtype=bool)
        rows = table.column(_ROW).to_numpy()[has]
        ends = np.cumsum([len(c) for c in chunks])
        data_bufs, data_starts, data_lens = batch.data_buf, batch.data_start, batch.data_len
        assert data_bufs is not None and data_starts is not None and data_lens is not None, "made by __post_init__"
        sizes = _itemsizes(batch)
        for k, chunk in enumerate(chunks):
            first = int(ends[k]) - len(chunk)
            mine = (rows >= first) & (rows < ends[k])
            validity, offsets_buf, data_buf = chunk.buffers()
            if not mine.any() or data_buf is None:
                continue
            at = rows[mine] - first + chunk.offset
            wide = pa.types.is_large_binary(chunk.type)
            offsets = np.frombuffer(offsets_buf, dtype=np.int64 if wide else np.int32).astype(np.int64)
            if at.max() + 1 >= len(offsets):
                continue
            start, end = offsets[at], offsets[at + 1]
            data = np.frombuffer(data_buf, dtype=np.uint8)
            i = has[mine]
            ok = (0 <= start) & (start <= end) & (end <= data_buf.size) & ((data_buf.address + start) % sizes[i] == 0)
            if validity is not None:
                bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
                ok &= bits[at].astype(bool) if at.max() < len(bits) else False
            i, start, end = i[ok], start[ok], end[ok]
            holder = np.empty(1, dtype=object)
            holder[0] = data
            data_bufs[i] = holder
            data_starts[i] = start
            data_lens[i] = end - start
            left[i] = False
        remaining: np.ndarray = has[left[has]]
        return remaining

    def _tensor_rows(self, table: pa.Table, rg: int, cache: _RowGroupCache) -> np.ndarray:
        """The positions in `table` of the rows that hold a tensor (as _records_of finds them)."""
        nulls = self.data_nulls(rg)
        group_rows = int(self.row_group_starts[rg + 1]) - int(self.row_group_starts[rg])
        if nulls == group_rows:
            return np.zeros(0, dtype=np.int64)
        if nulls == 0:
            return np.arange(table.num_rows)
        rows = table.column(_ROW).to_numpy().tolist()
        return np.array([i for i, row in enumerate(rows) if cache.has_tensor(self, rg, row)], dtype=np.int64)

    def _add_loaders(
        self, batch: RecordBatch, table: pa.Table, rg: int, cache: _RowGroupCache, has: np.ndarray
    ) -> None:
        """A tensor loader for each of the rows `has`: where the row group's tensors are handed over in memory,
        only the rows whose bytes could not be placed (every row's loader was made, then dropped)."""
        if not len(has):
            return
        sizes = _itemsizes(batch)
        rows = table.column(_ROW).to_numpy()
        for i in has.tolist():
            batch.loader[i] = cache.loader(self, rg, int(rows[i]), int(sizes[i]))

    def _row_groups(self, sel: Selection) -> list[tuple[int, Callable[[], pa.Table]]]:
        """(row group, a function reading its summary columns) for the row groups the selection may keep."""
        if self.recovered is not None:
            pf, lock = self.recovered, self._recovered_lock
            names, columns = list(self.summary_columns), list(self.summary_columns.values())

            def summary(rg: int) -> pa.Table:
                with lock:
                    return pf.read_row_group(rg, columns=columns).rename_columns(names)

            return [(rg, functools.partial(summary, rg)) for rg in range(self.row_group_count)]
        projection = {c: ds.field(column) for c, column in self.summary_columns.items()}
        # The caller's own expression names this layout's columns: pushed down only to files of it.
        pushed = sel.expression(self.columns, own_filter=self.current_layout)
        return [
            (piece.row_groups[0].id, functools.partial(piece.to_table, schema=self.schema, columns=projection))
            for piece in self.fragment.split_by_row_group(pushed, schema=self.schema)
        ]

    def _records_of(self, table: pa.Table, rg: int, cache: _RowGroupCache, trace: Trace) -> Iterator[TraceRecord]:
        n = table.num_rows
        cols = {name: table.column(name).to_pylist() for name in table.column_names if name != _VALUES}
        for name in SUMMARY_COLUMNS:
            cols.setdefault(name, [None] * n)
        values = _list_rows(table.column(_VALUES)) if _VALUES in table.column_names else [np.empty(0)] * n
        has_stats = all(c in table.column_names for c in STATS_COLUMNS)
        nulls = self.data_nulls(rg)
        first_row = int(self.row_group_starts[rg])
        group_rows = int(self.row_group_starts[rg + 1]) - first_row
        for i in range(n):
            row = cols[_ROW][i]
            where = Location(self.path, row=first_row + row)
            try:
                rec = _record(cols, i, values[i], has_stats, where)
            except (ValueError, TypeError) as exc:
                trace.report(where, f"invalid record ({exc}); row skipped")
                continue
            has_data = nulls == 0 or (nulls != group_rows and cache.has_tensor(self, rg, row))
            if has_data:
                itemsize = 1 if rec.dtype is None else schema_gen.DTYPE_SIZES.get(rec.dtype, 1)
                rec.loader = cache.loader(self, rg, row, itemsize)
            yield rec

    def read_tensors(self, rg: int) -> pa.ChunkedArray:
        if self.recovered is not None:
            with self._recovered_lock:
                return self.recovered.read_row_group(rg, columns=[self._data_column]).column(0)
        table = self.fragment.subset(row_group_ids=[rg]).to_table(columns={DATA_COLUMN: ds.field(self._data_column)})
        return table.column(DATA_COLUMN)


def _recover(path: Path, f: BinaryIO, size: int, missing: FooterError) -> tuple[Footer, pq.ParquetFile]:
    """The footer a file written in pieces would have had, over its whole row groups, and a ParquetFile
    that reads them; OrchlogError when the file was not written in pieces (no row group can be found)."""
    try:
        pieces, end = find_pieces(f, size)
        thrift = assemble(pieces)
        footer = parse_footer(thrift, end, size)
        meta = pq.read_metadata(pa.BufferReader(MAGIC + thrift + struct.pack("<I", len(thrift)) + MAGIC))
        return footer, pq.ParquetFile(str(path), metadata=meta)
    except (FooterError, pa.ArrowException, OSError) as exc:
        raise OrchlogError(
            f"{path}: not a readable Parquet file ({missing}; no row group found either: {exc})"
        ) from None


def _record(cols: dict[str, list[Any]], i: int, values: np.ndarray, has_stats: bool, where: Location) -> TraceRecord:
    """Row i as a TraceRecord, its values checked as every reader checks them (orchlog.read.fields)."""
    stats = None
    if has_stats:
        nan_count, inf_count = (cols[c][i] for c in STATS_COLUMNS[-2:])
        low, high, mean, rms, abs_max = (fields.number(cols[c][i]) for c in STATS_COLUMNS[:-2])
        stats = Stats(
            *(low, high, mean, rms, abs_max),
            nan_count=fields.count(0 if nan_count is None else nan_count, "nan_count"),
            inf_count=fields.count(0 if inf_count is None else inf_count, "inf_count"),
        )
    return TraceRecord(
        **identity(fields.identity_values({c.name: cols[COLUMN_OF[c.name]][i] for c in COLUMNS})),
        dtype=dtype_name(fields.text(cols[DTYPE_COLUMN][i], "dtype")),
        shape=fields.shape(cols[COLUMN_OF["shape"]][i]),
        numel=fields.count(cols[COLUMN_OF["numel"]][i], "numel"),
        values=values,
        stats=stats,
        blake3=fields.blake3(cols[COLUMN_OF["blake3"]][i]),
        meta=fields.meta(meta_from_pairs(cols[COLUMN_OF["meta"]][i])),
        location=where,
    )


def _itemsizes(batch: RecordBatch) -> np.ndarray:
    """Each row's element size, which its tensor's bytes are aligned to (1 for an unknown dtype)."""
    return batch.dtype.per_row(lambda d: 1 if d is None else schema_gen.DTYPE_SIZES.get(d, 1), dtype=np.int64)


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _list_rows(column: pa.ChunkedArray) -> list[np.ndarray]:
    """Each row of a list<float64> column as a NumPy view, without a Python float per element."""
    off, flat = list_column(column)
    return [flat[off[i] : off[i + 1]] for i in range(len(off) - 1)]


def _equals_all(values: dict[str, Any]) -> ds.Expression:
    expression = None
    for key, value in values.items():
        term = ds.field(key).is_null() if value is None else ds.field(key) == value
        expression = term if expression is None else expression & term
    return expression


def _footer_data_nulls(key_values: dict[bytes, bytes], row_groups: int) -> list[int]:
    """Rows without a tensor per row group, as orchlog's writers keep them in the footer; [] when absent or odd."""
    raw = key_values.get(DATA_NULLS_KEY.encode())
    try:
        nulls = json.loads(raw) if raw is not None else []
    except ValueError:
        return []
    ok = isinstance(nulls, list) and len(nulls) == row_groups and all(isinstance(x, int) for x in nulls)
    return nulls if ok else []


class _RowGroupCache:
    """The tensor column of the row group read last, shared by the records of one trace.

    Reading a row group also starts reading the next one the selection visits
    on a worker thread (pyarrow decompresses without holding the GIL), so a
    consumer walking the trace in order finds it ready: on two cores, one
    side's row group decompresses while the other side's is being measured.
    Memory grows by at most that one row group, and a row group the selection
    skips is never read.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, int] | None = None
        self._chunks: list[pa.Array] = []
        self._next: tuple[tuple[str, int], Future[pa.ChunkedArray]] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._successor: dict[tuple[str, int], int] = {}  # row group -> the next one the selection reads

    def plan(self, f: _File, row_groups: list[int]) -> None:
        """The row groups of f that a walk will read, in order: what to read ahead of each."""
        with self._lock:
            self._successor.update({(f.path, rg): nxt for rg, nxt in zip(row_groups, row_groups[1:])})

    def _column(self, f: _File, rg: int) -> list[pa.Array]:
        with self._lock:
            if self._key != (f.path, rg):
                self._chunks, self._key = [], None  # let the old row group go before reading the next
                self._chunks = self._take(f, rg)
                self._key = (f.path, rg)
            return self._chunks

    def _take(self, f: _File, rg: int) -> list[pa.Array]:
        """Row group rg's tensors, from the read ahead when it guessed right; then read ahead again."""
        ahead, self._next = self._next, None
        chunks: list[pa.Array]
        if ahead is not None and ahead[0] == (f.path, rg):
            chunks = ahead[1].result().chunks
        else:
            if ahead is not None:
                ahead[1].cancel()
            chunks = f.read_tensors(rg).chunks
        nxt = self._successor.get((f.path, rg))
        if nxt is not None:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="orchlog-parquet")
                weakref.finalize(self, self._pool.shutdown, wait=False, cancel_futures=True)
            self._next = ((f.path, nxt), self._pool.submit(f.read_tensors, nxt))
        return chunks

    def tensors(self, f: _File, rg: int) -> list[pa.Array]:
        """Row group rg's tensor column, as its chunks; OSError when its pages are damaged."""
        try:
            return self._column(f, rg)
        except _DAMAGE as exc:  # what a loader raises on damaged pages (TraceRecord.raw_bytes)
            raise OSError(f"{f.path}: row group {rg}'s tensors are unreadable ({_first_line(exc)})") from None

    def _value(self, f: _File, rg: int, row: int) -> tuple[pa.Array, int]:
        chunks = self.tensors(f, rg)
        for chunk in chunks:
            if row < len(chunk):
                return chunk, row
            row -= len(chunk)
        raise IndexError(f"{f.path}: row group {rg} has no row {row}")

    def has_tensor(self, f: _File, rg: int, row: int) -> bool:
        chunk, i = self._value(f, rg, row)
        return _is_valid(chunk, i)

    def loader(self, f: _File, rg: int, row: int, itemsize: int) -> Callable[[], memoryview]:
        """Made only for rows that hold a tensor; one gone since (the file rewritten) is an OSError, as a cut-short one is."""

        def load() -> memoryview:
            data = self.tensor_bytes(f, rg, row, itemsize)
            if data is None:
                raise OSError(f"{f.path}: row group {rg} row {row} holds no tensor")
            return data

        return load

    def tensor_bytes(self, f: _File, rg: int, row: int, itemsize: int) -> memoryview | None:
        """The tensor's bytes as a read-only view of the Arrow buffer, copied only to align them;
        OSError when the row group's pages are damaged."""
        try:
            return self._tensor_bytes(f, rg, row, itemsize)
        except _DAMAGE as exc:
            if isinstance(exc, OSError):
                raise
            raise OSError(f"{f.path}: row group {rg} is damaged ({_first_line(exc)})") from None

    def _tensor_bytes(self, f: _File, rg: int, row: int, itemsize: int) -> memoryview | None:
        chunk, i = self._value(f, rg, row)
        if not _is_valid(chunk, i):
            return None
        _, offsets_buf, data_buf = chunk.buffers()
        start, end = np.frombuffer(offsets_buf, dtype=np.int64, count=2, offset=(chunk.offset + i) * 8)
        if data_buf is None or end == start:
            return memoryview(b"")
        if not 0 <= start <= end <= data_buf.size:
            raise OSError(f"{f.path}: row group {rg} is damaged (row {row}'s tensor lies outside its data)")
        view = data_buf.slice(int(start), int(end - start))
        if view.address % itemsize:
            # NumPy reads unaligned memory correctly but slowly, and some consumers refuse it.
            return memoryview(np.frombuffer(view, dtype=np.uint8).copy()).toreadonly()
        return memoryview(view).cast("B")


def _is_valid(chunk: pa.Array, i: int) -> bool:
    """Whether row i holds a value, from the validity bitmap.

    Not `chunk[i].is_valid`: making the scalar copies the value, 30 ms for a 32 MiB tensor.
    """
    validity = chunk.buffers()[0]
    if validity is None:
        return True
    bit = chunk.offset + i
    return bool(np.frombuffer(validity, dtype=np.uint8, count=1, offset=bit >> 3)[0] >> (bit & 7) & 1)
