"""Write a trace straight to Parquet: `Writer` (a context manager) and `open_writer`.

Rows are gathered until they make one row group (`row_group_bytes`, 16 MiB by
default), then compressed and written by a background thread, so memory stays
at a few row groups however long the run. Closing writes the footer; `close` runs when the
`with` block ends for any reason, an exception or Ctrl-C included, so a run
that stops early leaves a valid file holding every record logged before it
stopped. Each row group is written whole as soon as it is complete
(pieces.py), so a killed process (SIGKILL) or a full disk leaves a file
without its footer whose complete row groups orchlog still reads; the rows
of the row group being gathered are lost then (`flush` writes them now).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from orchlog import schema_gen
from orchlog.emit import knobs
from orchlog.encoding.record import HeaderInput, RecordInput, header_values, record_values
from orchlog.parquet.pieces import PieceFile
from orchlog.parquet.rows import RowBatch
from orchlog.parquet.schema import (
    DATA_COLUMN,
    DATA_NULLS_KEY,
    DEFAULT_CODEC,
    DEFAULT_LEVEL,
    DEFAULT_ROW_GROUP_BYTES,
    HEADERS_KEY,
    MAX_ROWS_PER_GROUP,
    headers_json,
    schema_with_headers,
    writer_options,
)


class RowGroupSink:
    """pyarrow's ParquetWriter with orchlog's column settings; each table written is one row group.

    A table is compressed and written by a thread while the caller gathers the
    next one: pyarrow releases the GIL while it writes, so reading, hashing and
    compressing overlap. One row group at most is in flight, which keeps memory
    bounded; an error in the thread is raised by the next call, and handed to
    `on_error` at once (from the thread). The thread lives as long as the sink
    (one thread per row group made the allocator keep a heap per thread: tens
    of MiB more).

    `durable`: write the file piece by piece (orchlog/parquet/pieces.py), so that
    a killed process or a full disk loses only the row group in flight.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        headers: Sequence[Mapping[str, Any]],
        codec: str = DEFAULT_CODEC,
        level: int | None = DEFAULT_LEVEL,
        durable: bool = False,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.headers = list(headers)
        self._written_headers = len(self.headers)
        self._on_error = on_error
        options = writer_options(codec, level)
        self._pieces = PieceFile(path, schema_with_headers(self.headers), options) if durable else None
        self._writer = None if durable else pq.ParquetWriter(str(path), schema_with_headers(self.headers), **options)
        self._queue: queue.SimpleQueue[tuple[RowGroupSink, pa.Table] | None] = queue.SimpleQueue()
        # Row groups handed to the thread (counted by the caller) and finished by it (written or failed:
        # counted by the thread), and a wake-up after each. Not a threading.Event: its methods take a
        # lock in Python code, and a Ctrl-C landing just after that lock is taken leaves it held, so that
        # the close at exit then waits forever.
        self._handed = 0
        self._finished = 0
        self._wake: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self.accepted: object = None  # the tag of the last table handed to the thread
        self._data_nulls: list[int] = []  # rows without a tensor in each row group written
        # Started here rather than at the first row group, where a Ctrl-C could leave a thread object
        # that never ran for later row groups to wait on.
        self._thread = threading.Thread(
            target=_write_queued, args=(self._queue,), daemon=True, name="orchlog-parquet-writer"
        )
        self._thread.start()
        # A sink dropped unclosed still ends its thread; not at interpreter exit, though:
        # open_writer's atexit close runs after the finalizers registered later and still
        # needs the thread (the daemon thread ends with the process anyway).
        weakref.finalize(self, self._queue.put, None).atexit = False

    def write(self, table: pa.Table, tag: object = None) -> None:
        """Hand one row group to the writer thread, after the one in flight is written."""
        self.wait()
        # Python raises a pending Ctrl-C only after a call returns, and the put is the last
        # call here: `accepted` and `_handed` are then never set for a table not handed over,
        # nor left unset for one that was.
        self.accepted = tag
        self._handed += 1
        self._queue.put((self, table))

    def _write_in_background(self, table: pa.Table) -> None:
        try:
            if self._pieces is not None:
                self._pieces.write_piece(table, schema_with_headers(self.headers))
            else:
                assert self._writer is not None, "a sink without pieces has a ParquetWriter until it is closed"
                self._writer.write_table(table, row_group_size=max(1, table.num_rows))
            data = table.column(DATA_COLUMN) if DATA_COLUMN in table.column_names else None
            self._data_nulls.append(table.num_rows if data is None else data.null_count)
        except BaseException as exc:
            self._error = exc
            if self._on_error is not None:
                self._on_error(exc)
        finally:
            self._finished += 1
            self._wake.put(None)

    def wait(self) -> None:
        """Until the row group in flight is written; its error, if any, is raised here."""
        while self._finished < self._handed and self._thread.is_alive():
            # A wake-up taken by a call that a Ctrl-C then ended is not lost for long: the counts decide.
            with contextlib.suppress(queue.Empty):
                self._wake.get(timeout=0.5)
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def close(self) -> None:
        """Finish the row group in flight and write the footer, even through Ctrl-C (then re-raised)."""
        interrupted = False
        try:
            interrupted |= _despite_interrupts(self.wait)
        finally:
            interrupted |= _despite_interrupts(self._close_file)
            self._queue.put(None)
            interrupted |= _despite_interrupts(self._thread.join)
        if interrupted:
            raise KeyboardInterrupt

    def _close_file(self) -> None:
        if self._pieces is not None:
            pieces, self._pieces = self._pieces, None
            if len(self.headers) != self._written_headers:
                pieces.write_piece(None, schema_with_headers(self.headers))  # late headers reach the footer
            pieces.close({DATA_NULLS_KEY: json.dumps(self._data_nulls, separators=(",", ":"))})
            return
        if self._writer is None or not self._writer.is_open:  # closed already (durable: pieces set to None)
            return
        extra = {DATA_NULLS_KEY: json.dumps(self._data_nulls, separators=(",", ":"))}
        if len(self.headers) != self._written_headers:
            # Headers met after the file was opened (a stream that several runs appended to)
            # still reach the footer; orchlog's reader reads this key from there.
            extra[HEADERS_KEY] = headers_json(self.headers)
        self._writer.add_key_value_metadata(extra)
        self._writer.close()


def _write_queued(jobs: queue.SimpleQueue[tuple[RowGroupSink, pa.Table] | None]) -> None:
    """The writer thread: (sink, table) jobs until None. It keeps no reference between jobs."""
    while True:
        job = jobs.get()
        if job is None:
            return
        sink, table = job
        del job
        sink._write_in_background(table)
        del sink, table


def _despite_interrupts(step: Callable[[], object]) -> bool:
    """Run step to completion, starting again after each Ctrl-C; whether there was one.

    A file without its footer is lost, so closing must not stop half-way.
    """
    interrupted = False
    while True:
        try:
            step()
            return interrupted
        except KeyboardInterrupt:
            interrupted = True


class Writer:
    """Log tensors from Python into a Parquet trace.

        with orchlog.parquet.Writer("run.parquet", team="mine") as w:
            w.log("attn_norm", hidden, token_idx=5, layer=3)

    Each row gets the canonical summary (leading values, stats, blake3) the other
    encodings carry, and the full tensor bytes. Thread-safe; `seq` counts rows.

    `durable` (the default) writes each row group whole as it goes (pieces.py): a
    process killed or a disk full leaves every row group written before readable.
    `on_error` hears of a failed write at once, from the writer's thread.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        config: Mapping[str, Any] | None = None,
        headers: Sequence[Mapping[str, Any]] | None = None,
        codec: str = DEFAULT_CODEC,
        level: int | None = DEFAULT_LEVEL,
        row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES,
        durable: bool = True,
        on_error: Callable[[BaseException], None] | None = None,
        **settings: Any,
    ) -> None:
        """`settings` are the run's (schema_gen.RunSettings: team, rank, world_size, values, ...),
        each left out taking its knob's default; the env is not read, but for SOURCE_DATE_EPOCH."""
        unknown = set(settings) - {k.setting for k in schema_gen.KNOBS}
        if unknown:
            raise TypeError(f"Writer() got unexpected keyword arguments {sorted(unknown)}")
        created = knobs.knob("created").name
        self.settings, _ = knobs.resolve(settings, {created: os.environ[created]} if created in os.environ else {})
        if headers is None:  # a run of its own; pack passes the headers of its inputs instead
            header = {name: self.settings[name] for name in HeaderInput.__dataclass_fields__ if name in self.settings}
            headers = [header_values(HeaderInput(language="python", **header, config=dict(config or {})))]
        self.path = Path(path)
        self.values = self.settings["values"]
        self.row_group_bytes = row_group_bytes
        self.rows = 0  # rows handed to the writer, the next `seq`
        self._batch = RowBatch(capacity=row_group_bytes)
        self._lock = threading.RLock()
        self._sink: RowGroupSink | None = RowGroupSink(path, headers, codec, level, durable, on_error)

    # ------------------------------------------------------------------ logging

    def log(
        self,
        checkpoint: str,
        tensor: Any,
        *,
        dtype: str | None = None,
        meta: Mapping[str, Any] | None = None,
        **key: Any,
    ) -> None:
        """Log one tensor (a NumPy array or anything np.asarray takes; pass dtype="bf16" for bf16 bits as uint16)
        at the key parts given by name (token_idx=, layer=, stage=, step=, rank=: schema_gen.KEY_PARTS)."""
        unknown = set(key) - set(schema_gen.KEY_PARTS)
        if unknown:
            raise TypeError(f"log() got unexpected keyword arguments {sorted(unknown)}")
        arr = np.asarray(tensor)
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")  # not ascontiguousarray: it turns a 0-d scalar into shape (1,)
        schema_dtype = dtype or schema_gen.DTYPE_ALIASES.get(arr.dtype.name)  # NumPy's names are aliases
        if schema_dtype is None:
            raise ValueError(f"cannot log a {arr.dtype} tensor; convert it to one of {', '.join(schema_gen.DTYPES)}")
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        # The row group keeps a copy of the bytes (append makes it), so the caller may reuse its buffer.
        self.write_record(
            RecordInput(
                checkpoint=checkpoint,
                dtype=schema_dtype,
                shape=arr.shape,
                data=arr.reshape(-1).view(np.uint8).data,
                **knobs.record_identity(key, self.settings),
                values=self.values,
                meta=dict(meta or {}),
            )
        )

    def write_record(self, record: RecordInput) -> None:
        """Compute a record's fields by the canonical rules and add it as a row; `seq` is the writer's."""
        self.append(record_values(record), assign_seq=True)

    def append(self, fields: Mapping[str, Any], assign_seq: bool = False, reserved: bool = False) -> None:
        """Add a row whose field values are complete (stats, blake3 and all).

        `reserved`: the tensor bytes were written into the room `reserve` gave.
        """
        with self._lock:
            if self._sink is None:
                raise ValueError(f"{self.path} is closed")
            if assign_seq:
                # Under the lock, so that seq is also the order of the rows in the file.
                fields = {**fields, "seq": self.rows}
            if not reserved and fields["data"] is not None:
                self._make_room(memoryview(fields["data"]).nbytes)
            self._batch.append(fields, reserved)
            self.rows += 1
            if self._batch.nbytes >= self.row_group_bytes or len(self._batch) >= MAX_ROWS_PER_GROUP:
                self.flush()

    def append_columns(self, columns: dict[str, pa.Array], tensors: Sequence[memoryview | None]) -> None:
        """Add rows given as their columns, complete (seq included), and their tensor bytes (pack's batches:
        rows.RowBatch.append_columns). The rows go into one row group: give at most a quarter of
        `row_group_bytes` at a time, so that row groups stay near their size."""
        with self._lock:
            if self._sink is None:
                raise ValueError(f"{self.path} is closed")
            self._make_room(sum(0 if t is None else t.nbytes for t in tensors))
            self._batch.append_columns(columns, tensors)
            self.rows += len(tensors)
            if self._batch.nbytes >= self.row_group_bytes or len(self._batch) >= MAX_ROWS_PER_GROUP:
                self.flush()

    def reserve(self, nbytes: int) -> memoryview:
        """Room in the row group being gathered for the next row's tensor bytes (saves pack a copy)."""
        with self._lock:
            self._make_room(nbytes)
            return self._batch.reserve(nbytes)

    def _make_room(self, nbytes: int) -> None:
        if not self._batch.has_room(nbytes):
            self.flush()

    def add_header(self, header: Mapping[str, Any]) -> None:
        """Another run header for the footer (pack meets one per input)."""
        with self._lock:
            if self._sink is not None:
                self._sink.headers.append(header)

    def flush(self, wait: bool = False) -> None:
        """Write the buffered rows as a row group now; `wait`: return once it is written (OSError if it was not)."""
        with self._lock:
            if self._sink is None:
                return
            if not len(self._batch):
                if wait:
                    self._sink.wait()
                return
            # Wait for the row group in flight first: a Ctrl-C while waiting leaves these
            # rows in the batch, for close to write. One that lands after the sink took
            # them but before the batch is cleared must not write them twice: the sink
            # remembers which batch it took.
            self._sink.wait()
            if self._sink.accepted != self._batch.generation:
                self._sink.write(self._batch.table(), self._batch.generation)
            self._batch.clear()
            if wait:
                self._sink.wait()

    # ------------------------------------------------------------------ closing

    @property
    def closed(self) -> bool:
        return self._sink is None

    def close(self) -> None:
        """Write the gathered rows and the footer, even through a Ctrl-C (re-raised after). Safe to call again."""
        with self._lock:
            sink = self._sink
            if sink is None:
                return
            try:
                interrupted = _despite_interrupts(self.flush)  # flush never writes a batch twice
            finally:
                self._sink = None
                atexit.unregister(self.close)
                sink.close()
            if interrupted:
                raise KeyboardInterrupt

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# The writers open_writer made, which close themselves at exit: a forked child must not (below).
_closing_at_exit: weakref.WeakSet[Writer] = weakref.WeakSet()


def _forget_in_child() -> None:
    """In a forked child: the parent's writers are the parent's. Their close at exit would write the rows
    the child inherited, and a footer, into the parent's file (and wait for a writer thread that does not
    exist here), so each is dropped as closed without writing or locking anything."""
    for writer in list(_closing_at_exit):
        atexit.unregister(writer.close)
        writer._sink = None
    _closing_at_exit.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def open_writer(path: str | os.PathLike[str], **options: Any) -> Writer:
    """A Writer that also closes itself at interpreter exit (in the process that opened it, not in a child
    forked from it).

    This is what `orchlog.configure(format="parquet", path=...)` hands its records
    to: an engine that never calls close still gets a readable file when Python exits.
    """
    writer = Writer(path, **options)
    _closing_at_exit.add(writer)
    # pyarrow imports pandas the first time it builds an array, to ask whether the input is a
    # pandas object; at interpreter exit that import fails (no atexit registration after
    # shutdown) and the close would lose every row. Build one now, while imports still work.
    pa.array([0])
    atexit.register(writer.close)
    return writer
