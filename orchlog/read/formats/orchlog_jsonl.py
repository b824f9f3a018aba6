"""orchlog JSONL: a header line, then one record per line (FORMAT.md).

Read in chunks of whole lines: the native parser (orchlog._kernels) turns
every canonical record line into columns, and hands back the rest (the
header, lines laid out differently, broken lines) to be parsed here one by
one, reported by line number when they are not records.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from orchlog import kernels
from orchlog.read import fields
from orchlog.read.batch import COUNT_FIELDS, NONE, STAT_FIELDS, RecordBatch
from orchlog.read.formats import Format, register
from orchlog.read.formats.lines import CHUNK_BYTES, cut_unterminated, parse_object, read_line_chunks, split_lines
from orchlog.read.trace import BATCH_ROWS, Location, Trace, TraceRecord, identity
from orchlog.schema_gen import COLUMNS, DTYPE_ALIASES, STATS_FIELDS, Stats
from orchlog.strings import Strings

# A file holds one run (FORMAT.md): a header further down means another writer, or another run,
# wrote into this file, and the records around it may be missing or overwritten.
SECOND_HEADER = "another run header in the middle of the file (two processes or runs wrote this file?)"
_REQUIRED = ("checkpoint", "dtype", "shape", "numel", "values", "stats", "blake3")
_NARROW_FLOATS = ("f32", "f16", "bf16")


number = fields.number  # kept under its old name: the legacy readers import it from here


def stats_from(doc: Any) -> Stats:
    doc = fields.mapping(doc, "stats")
    # Each field as the schema types it (f64: float or None, else a count), as Stats declares them.
    values: dict[str, Any] = {
        f.name: number(doc.get(f.name)) if f.type == "f64" else fields.count(doc.get(f.name, 0), f.name)
        for f in STATS_FIELDS
    }
    return Stats(**values)


def exact_values(values: np.ndarray, dtype: str | None) -> np.ndarray:
    """Printed f32/f16/bf16 values back to the exact numbers the tensor held.

    The text is the shortest decimal that rounds to the f32 (FORMAT.md), so
    rounding its f64 reading to f32 recovers the element exactly; without
    this step the same tensor read from JSONL and from the binary stream
    would differ in the ninth digit.
    """
    if dtype in _NARROW_FLOATS and values.size:
        return values.astype(np.float32).astype(np.float64)
    return values


def record_from(doc: dict[str, Any], location: Location) -> TraceRecord:
    """A TraceRecord from a decoded record object (JSON line or msgpack map); ValueError says what is wrong."""
    missing = [k for k in _REQUIRED if k not in doc]
    if missing:
        raise ValueError(f"record lacks {', '.join(missing)}")
    dtype = fields.text(doc["dtype"], "dtype")
    dtype = DTYPE_ALIASES.get(dtype, dtype)
    return TraceRecord(
        **identity({**doc, **fields.identity_values(doc)}),
        dtype=dtype,
        shape=fields.shape(doc["shape"]),
        numel=fields.count(doc["numel"], "numel"),
        values=exact_values(_values_array(doc["values"]), dtype),
        stats=stats_from(doc["stats"]),
        blake3=fields.blake3(doc["blake3"]),
        meta=fields.meta(doc.get("meta")),
        location=location,
    )


def _values_array(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values.astype(np.float64, copy=False)
    if not isinstance(values, list):
        raise ValueError(f"values {fields.shown(values)} is not a list")
    return np.array([number(v) for v in values], dtype=np.float64)


def _sniff(path: Path, head: bytes) -> bool:
    first = head.lstrip()[:64]
    return first.startswith(b'{"orchlog":') or (
        first.startswith(b'{"checkpoint":') and b'"numel":' in head[:4096] and b'"blake3":' in head[:4096]
    )


def keep_header(trace: Trace, doc: dict[str, Any], where: Location) -> None:
    """A run header onto the trace; one that is not a usable header, or a second one, is reported."""
    try:
        header = fields.header(doc)
    except ValueError as exc:
        trace.report(where, f"invalid header ({exc}); skipped")
        return
    if trace.headers:
        trace.report(where, SECOND_HEADER)
    trace.headers.append(header)


def parse_line(trace: Trace, line: bytes, lineno: int) -> TraceRecord | None:
    """A record from one line, a header kept on the trace, or None with the problem reported."""
    doc = parse_object(trace, line, lineno)
    if doc is None:
        return None
    if "orchlog" in doc:
        keep_header(trace, doc, Location(trace.path, line=lineno))
        return None
    try:
        return record_from(doc, Location(trace.path, line=lineno))
    except (ValueError, TypeError, KeyError) as exc:
        trace.report(Location(trace.path, line=lineno), f"invalid record ({exc}); line skipped")
        return None


def batch_from_columns(cols: dict[str, Any], path: str, trace: Trace | None = None) -> RecordBatch:
    """A RecordBatch from the native parser's columns; rows whose meta is not an object of scalars
    are reported on `trace` and left out."""
    n = int(cols["n"])
    dtype_names = [DTYPE_ALIASES.get(d, d) for d in cols["dtype_names"]]
    values = cols["values"]
    # Leading values of narrow floats are rounded to f32, as the Python reader rounds them. A table per
    # dtype name (and a last False for a code of -1), not np.isin: a tenth of a window's decode time.
    narrow = np.array([d in _NARROW_FLOATS for d in dtype_names] + [False])[cols["dtype"]]
    if narrow.all():  # the usual batch: one dtype, f32
        values[:] = values.astype(np.float32)
    elif narrow.any():
        mask = np.repeat(narrow, np.diff(cols["val_off"]))
        values[mask] = values[mask].astype(np.float32)
    meta = np.full(n, None, dtype=object)
    bad = []
    for row, text in cols["meta"]:
        try:
            meta[row] = fields.meta(orjson.loads(text))
        except ValueError as exc:  # orjson's errors are ValueErrors too
            bad.append(row)
            if trace is not None:
                where = Location(path, line=int(cols["line"][row]))
                trace.report(where, f"invalid record (meta: {exc}); line skipped")
    schema_columns = {}
    for c in COLUMNS:
        column = cols[c.name]
        if c.kind == "text":
            column = Strings(cols[f"{c.name}_names"], column)
        elif c.kind == "floats":
            column = column.reshape(n, c.length)
        schema_columns[c.name] = column
    batch = RecordBatch(
        **schema_columns,
        dtype=Strings(dtype_names, cols["dtype"]),
        numel=cols["numel"],
        has_shape=np.ones(n, dtype=bool),
        shape_off=cols["shape_off"],
        shape_dims=cols["shape"],
        val_off=cols["val_off"],
        values=values,
        stats=cols["stats"].reshape(n, len(STAT_FIELDS)),
        counts=cols["counts"].reshape(n, len(COUNT_FIELDS)),
        blake3=np.frombuffer(cols["blake3"], dtype="S64"),
        meta=meta,
        path=Strings.repeat(path, n),
        line=cols["line"],
        offset=np.full(n, NONE, dtype=np.int64),
        order=np.zeros(n, dtype=np.int64),
        loader=np.full(n, None, dtype=object),
    )
    return batch.take(np.setdiff1d(np.arange(n), bad)) if bad else batch


def _parse_chunk(trace: Trace, chunk: memoryview | bytes, first_line: int) -> tuple[RecordBatch, int]:
    """The records of a chunk of whole lines, and how many lines it held."""
    cols = kernels.parse_orchlog_jsonl(chunk, first_line)
    if cols is None:
        text = bytes(chunk)
        others: Iterator[tuple[int, bytes]] = split_lines(text, first_line)
        fast, lines = None, text.count(b"\n")
    else:
        spans = cols["other"].reshape(-1, 3)
        others = ((int(ln), bytes(chunk[s:e])) for ln, s, e in spans)
        fast, lines = (batch_from_columns(cols, trace.path, trace) if cols["n"] else None), int(cols["lines"])
    slow = [rec for lineno, line in others if (rec := parse_line(trace, line, lineno)) is not None]
    if fast is None:
        return RecordBatch.from_records(slow), lines
    if not slow:
        return fast, lines
    both = RecordBatch.concat([fast, RecordBatch.from_records(slow)])
    return both.take(np.argsort(both.line, kind="stable")), lines


def _batches(trace: Trace, rows: int, tensors: bool) -> Iterator[RecordBatch]:
    """A batch a chunk of lines (which holds no tensor); a caller that asks for fewer rows than a chunk holds
    (a peek at the start) gets a first chunk sized by them, about 2 KiB a row: a peek at 512 rows of a
    large trace parsed 4 MiB, 3,800 rows, where 1 MiB holds them."""
    del tensors
    first_line = 1
    for chunk in read_line_chunks(trace, CHUNK_BYTES if rows >= BATCH_ROWS else max(64 << 10, rows * 2048)):
        batch, lines = _parse_chunk(trace, cut_unterminated(trace, chunk, first_line), first_line)
        first_line += lines
        if len(batch):
            yield batch


def open_jsonl(path: Path) -> Trace:
    return Trace(str(path), "orchlog-jsonl", batches=_batches)


register(Format("orchlog-jsonl", _sniff, open_jsonl, priority=20))
