"""Pack traces into one Parquet file, checking every tensor against its blake3 on the way.

Inputs are anything `orchlog.open_trace` reads: binary streams give rows
with their tensor bytes, JSONL summaries rows whose `data` is null. Several
inputs (one per rank, say) become one trace; each row keeps its rank, and
each input's header goes into the footer.

Nothing is hidden and nothing readable is dropped: a hash that does not
match, a tensor of the wrong length, a truncated or damaged input are each
reported with their file and position, and the rows are written as found so
that `orchlog validate --verify-hashes` still sees the mismatch later.
`strict=True` makes the first problem fatal instead, and leaves no output.
The output appears under its name only when packing has finished.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import blake3
import numpy as np
import pyarrow as pa

from orchlog import schema_gen
from orchlog.encoding import digest as encoding_digest
from orchlog.encoding import stats as canonical_stats
from orchlog.encoding.record import numel as shape_numel
from orchlog.errors import OrchlogError
from orchlog.parquet import schema
from orchlog.parquet.rows import columns_of, packable
from orchlog.parquet.schema import DEFAULT_CODEC, DEFAULT_LEVEL, DEFAULT_ROW_GROUP_BYTES, MAX_ROWS_PER_GROUP
from orchlog.parquet.writer import Writer
from orchlog.read.batch import RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.trace import Diagnostic, Location, Trace, TraceRecord
from orchlog.records import record


@record
class PackResult:
    output: Path
    inputs: list[str]
    records: int = 0  # rows written
    tensors: int = 0  # rows with tensor bytes
    tensor_bytes: int = 0
    problems: list[Diagnostic] = dataclasses.field(default_factory=list)

    def __bool__(self) -> bool:
        """True when every input was read whole and every tensor matched its hash."""
        return not self.problems

    def __str__(self) -> str:
        text = (
            f"packed {self.records:,} records ({self.tensors:,} with tensors, {_size(self.tensor_bytes)}) "
            f"from {len(self.inputs)} input{'s' if len(self.inputs) != 1 else ''} into {self.output}"
        )
        if self.problems:
            text += f"; {len(self.problems)} problem{'s' if len(self.problems) != 1 else ''} reported"
        return text


class _Strict(Exception):
    """The first problem of a strict pack."""


def pack(
    inputs: Iterable[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    strict: bool = False,
    codec: str = DEFAULT_CODEC,
    level: int | None = DEFAULT_LEVEL,
    row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES,
    on_problem: Callable[[Diagnostic], None] | None = None,
    on_records: Callable[[int], None] | None = None,
) -> PackResult:
    """Write `inputs` into the Parquet file `output`; problems go to `on_problem` as they are found, and
    `on_records` hears how many records were packed as they go."""
    paths = [Path(p) for p in inputs]
    out = Path(output)
    _check_paths(paths, out)
    result = PackResult(out, [str(p) for p in paths])
    traces = [open_trace(p) for p in paths]
    streams = [_with_headers_known(t) for t in traces]
    parts = max(row_group_bytes // 4, 1)  # tensor bytes written at a time: row groups stay near their size
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")

    def problem(where: Location | None, message: str) -> None:
        diag = Diagnostic(where or Location(str(out)), message)
        if strict:
            raise _Strict(str(diag))
        result.problems.append(diag)
        if on_problem is not None:
            on_problem(diag)

    try:
        writer = Writer(
            partial,
            headers=[h for t in traces for h in t.headers],
            codec=codec,
            level=level,
            row_group_bytes=row_group_bytes,
            durable=False,  # the output appears under its name only when complete: a crash leaves nothing to save
        )
        try:
            for trace, batches in zip(traces, streams):
                headers_seen, diagnostics_seen = len(trace.headers), 0
                for batch in batches:
                    diagnostics_seen = _report_new(trace, diagnostics_seen, problem)
                    _pack_batch(batch, writer, result, problem, parts)
                    if on_records is not None:
                        on_records(len(batch))
                _report_new(trace, diagnostics_seen, problem)
                for header in trace.headers[headers_seen:]:
                    writer.add_header(header)
                writer.flush()  # a row group never mixes inputs: tensor-less row groups stay recognisable
        finally:
            writer.close()
        os.replace(partial, out)
    except _Strict as exc:
        raise OrchlogError(f"{exc} (--strict: stopped, nothing written)") from None
    finally:
        partial.unlink(missing_ok=True)
    return result


def _check_paths(inputs: list[Path], out: Path) -> None:
    if not inputs:
        raise OrchlogError("nothing to pack: give at least one input")
    if not out.parent.is_dir():
        raise OrchlogError(f"{out.parent} is not a directory: cannot write {out.name} there")
    if out.is_dir():
        raise OrchlogError(f"{out} is a directory; give the output file's name")
    for p in inputs:
        if p.exists() and out.exists() and os.path.samefile(p, out):
            raise OrchlogError(f"{out} is also an input; write the Parquet file elsewhere")


def _with_headers_known(trace: Trace) -> Iterator[RecordBatch]:
    """The trace's batches, after reading the first so that the header before it is known.

    The file footer's metadata is fixed when writing starts, and every format puts its
    header first, so one batch of read-ahead per input gives pack every header in time.
    """
    batches = trace.batches()
    first = next(batches, None)

    def chained() -> Iterator[RecordBatch]:
        if first is not None:
            yield first
            yield from batches

    return chained()


def _report_new(trace: Trace, seen: int, problem: Callable[[Location | None, str], None]) -> int:
    for diag in trace.diagnostics[seen:]:
        problem(diag.location, diag.message)
    return len(trace.diagnostics)


def _pack_batch(
    batch: RecordBatch,
    writer: Writer,
    result: PackResult,
    problem: Callable[[Location | None, str], None],
    part_bytes: int,
) -> None:
    """A batch's rows in order: those it holds whole (rows.packable) a run of columns at a time, each
    tensor checked against its hash; any other as a record, which computes what it lacks."""
    fast = packable(batch)
    data_len = batch.data_len
    assert data_len is not None, "made by RecordBatch.__post_init__"
    run: list[int] = []
    run_bytes = 0
    for i in range(len(batch)):
        if not fast[i]:
            _write_run(batch, run, writer, result, problem)
            run, run_bytes = [], 0
            _pack_record(batch.record(i), writer, result, problem)
            continue
        nbytes = max(int(data_len[i]), 0)
        if run and (run_bytes + nbytes > part_bytes or len(run) >= MAX_ROWS_PER_GROUP // 4):
            _write_run(batch, run, writer, result, problem)
            run, run_bytes = [], 0
        run.append(i)
        run_bytes += nbytes
    _write_run(batch, run, writer, result, problem)


def _write_run(
    batch: RecordBatch,
    run: list[int],
    writer: Writer,
    result: PackResult,
    problem: Callable[[Location | None, str], None],
) -> None:
    if not run:
        return
    try:
        columns = columns_of(batch, np.array(run, dtype=np.int64))
    except (ValueError, TypeError, OverflowError, pa.ArrowException):  # the records say what is wrong, row by row
        for i in run:
            _pack_record(batch.record(i), writer, result, problem)
        return
    tensors: list[memoryview | None] = []
    for i in run:
        loader = batch.loader_of(i)
        data = None if loader is None else memoryview(loader()).cast("B")
        if data is not None:
            dtype, numel, digest = batch.dtype[i], int(batch.numel[i]), batch.blake3[i].decode()
            for message in data_problems(dtype, numel, digest, data):
                problem(batch.location(i), f"{message}; written as found")
        tensors.append(data)
    writer.append_columns(columns, tensors)
    result.records += len(run)
    result.tensors += sum(t is not None for t in tensors)
    result.tensor_bytes += sum(t.nbytes for t in tensors if t is not None)


def _pack_record(
    rec: TraceRecord, writer: Writer, result: PackResult, problem: Callable[[Location | None, str], None]
) -> None:
    data, reserved = None, False
    nbytes = getattr(rec.loader, "nbytes", None)
    if nbytes is not None and nbytes > schema.MAX_TENSOR_BYTES:
        problem(
            rec.location,
            f"a tensor of {nbytes:,} bytes is more than one Parquet value can hold; row written without it",
        )
    elif rec.has_data:
        try:
            data, reserved = _read_tensor(rec, writer)
        except OSError as exc:
            problem(rec.location, f"tensor bytes unreadable ({exc}); row written without them")
        for message in tensor_problems(rec, data) if data is not None else []:
            problem(rec.location, f"{message}; written as found")
    try:
        writer.append(_fields(rec, data), reserved=reserved)
    except (ValueError, TypeError, KeyError) as exc:
        problem(rec.location, f"cannot pack this record ({exc}); skipped")
        return
    result.records += 1
    if data is not None:
        result.tensors += 1
        result.tensor_bytes += len(data)


def _read_tensor(rec: TraceRecord, writer: Writer) -> tuple[Any, bool]:
    """The tensor bytes, read straight into the row group when the loader can (binary streams can)."""
    readinto, nbytes = getattr(rec.loader, "readinto", None), getattr(rec.loader, "nbytes", None)
    if readinto is None or nbytes is None:
        return rec.raw_bytes(), False
    room = writer.reserve(nbytes)
    readinto(room)
    return room, True


def tensor_problems(rec: TraceRecord, data: Any) -> list[str]:
    """What is wrong with a record's tensor bytes: a length its shape does not give, a blake3 they do not hash to."""
    return data_problems(rec.dtype, rec.numel, rec.blake3, data)


def data_problems(dtype: str | None, numel: int | None, digest: str | None, data: Any) -> list[str]:
    """tensor_problems from the record's dtype, numel and blake3."""
    problems = []
    size = schema_gen.DTYPE_SIZES.get(dtype or "")
    if size is not None and numel is not None and len(data) != numel * size:
        problems.append(f"tensor has {len(data)} bytes, but {numel} {dtype} elements need {numel * size}")
    if digest is not None:
        actual = blake3.blake3(data).hexdigest()
        if actual != digest:
            problems.append(f"blake3 mismatch: the record says {digest}, its {len(data)} bytes hash to {actual}")
    return problems


_INT32_FIELDS = tuple(schema.FIELD_OF[f.name] for f in schema.ARROW_SCHEMA if str(f.type) == "int32")


def _fields(rec: TraceRecord, data: Any) -> dict[str, Any]:
    """The row for a record; what a summary lacks but its tensor gives is computed by the canonical rules."""
    stats, digest = rec.stats, rec.blake3
    floats = {c.name: getattr(rec, c.name) for c in schema_gen.COLUMNS if c.kind == "floats"}
    if data is not None and rec.dtype in schema_gen.DTYPE_SIZES:
        if stats is None:
            stats = canonical_stats.compute(data, rec.dtype)
        if digest is None:
            digest = blake3.blake3(data).hexdigest()
        for name, value in floats.items():  # the sketch: records of other tools' dumps come without one
            if value is None:
                floats[name] = encoding_digest.compute(name, data, rec.dtype)
    # A summary without one (another tool's statistics) has none to give: the columns hold what a reader
    # takes for absent, NaN rows and an empty hash (orchlog.read.batch), as docs/parquet.md says.
    for c in schema_gen.COLUMNS:
        if c.kind == "floats" and floats[c.name] is None:
            floats[c.name] = [math.nan] * (c.length or 0)
    digest = digest if digest is not None else ""
    if stats is None:
        raise ValueError("record has no stats and no tensor to compute them from")
    if rec.shape is None:
        raise ValueError("record has no shape")
    for name in _INT32_FIELDS:  # int64 in the readers, int32 columns in Parquet (the schema's types)
        value = getattr(rec, name)
        if value is not None and not -(2**31) <= value < 2**31:
            raise ValueError(f"{name} {value} does not fit the Parquet column's 32 bits")
    return {
        **{c.name: getattr(rec, c.name) for c in schema_gen.COLUMNS},
        **floats,
        # Formats without an execution counter get the record's place in its input.
        "seq": rec.seq if rec.seq is not None else rec.order,
        "dtype": rec.dtype,
        "shape": rec.shape,
        "numel": rec.numel if rec.numel is not None else shape_numel(rec.shape),
        "values": rec.values if rec.values is not None else (),
        "stats": stats,
        "blake3": digest,
        "meta": rec.meta,
        "data": data,
    }


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError
