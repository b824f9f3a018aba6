"""orchlog JSONL: a header line, then one record per line (FORMAT.md).

Read in chunks of whole lines: the native parser (orchlog._kernels) turns
every canonical record line into columns, and hands back the rest (the
header, lines laid out differently, broken lines) to be parsed here one by
one, reported by line number when they are not records.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from orchlog import kernels
from orchlog.read.batch import COUNT_FIELDS, NONE, STAT_FIELDS, RecordBatch
from orchlog.read.formats import Format, register
from orchlog.read.formats.lines import parse_object, read_line_chunks, report_unterminated, split_lines
from orchlog.read.trace import Location, Trace, TraceRecord, identity
from orchlog.schema_gen import COLUMNS, DTYPE_ALIASES, STATS_FIELDS, Stats
from orchlog.strings import Strings

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_REQUIRED = ("checkpoint", "dtype", "shape", "numel", "values", "stats", "blake3")
_NARROW_FLOATS = ("f32", "f16", "bf16")


def number(v: Any) -> float | None:
    """A JSON number or non-finite token as a float (None stays None)."""
    if v is None:
        return None
    if isinstance(v, str):
        if v in _NONFINITE:
            return _NONFINITE[v]
        raise ValueError(f"{v!r} is not a number")
    return float(v)


def stats_from(doc: dict[str, Any]) -> Stats:
    return Stats(
        **{f.name: number(doc.get(f.name)) if f.type == "f64" else int(doc.get(f.name, 0)) for f in STATS_FIELDS}
    )


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


def _optional_int(doc: dict[str, Any], name: str) -> int | None:
    """An integer key field (None when absent or null); anything else, or beyond 64 bits, is a ValueError."""
    v = doc.get(name)
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or not -(2**63) <= v < 2**63:
        raise ValueError(f"{name} is not a 64-bit integer")
    return v


def _checked_ints(doc: dict[str, Any]) -> dict[str, int | None]:
    """The integer identity fields of a decoded record, each checked to be a 64-bit integer."""
    return {c.name: _optional_int(doc, c.name) for c in COLUMNS if c.kind == "int" and c.name in doc}


def record_from(doc: dict[str, Any], location: Location) -> TraceRecord:
    """A TraceRecord from a decoded record object (JSON line or msgpack map)."""
    missing = [k for k in _REQUIRED if k not in doc]
    if missing:
        raise ValueError(f"record lacks {', '.join(missing)}")
    dtype = DTYPE_ALIASES.get(doc["dtype"], doc["dtype"])
    return TraceRecord(
        **identity({**doc, **_checked_ints(doc), "checkpoint": str(doc["checkpoint"])}),
        dtype=dtype,
        shape=tuple(int(d) for d in doc["shape"]),
        numel=int(doc["numel"]),
        values=exact_values(_values_array(doc["values"]), dtype),
        stats=stats_from(doc["stats"]),
        blake3=doc["blake3"],
        meta=dict(doc.get("meta") or {}),
        location=location,
    )


def _values_array(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values.astype(np.float64, copy=False)
    return np.array([number(v) for v in values], dtype=np.float64)


def _sniff(path: Path, head: bytes) -> bool:
    first = head.lstrip()[:64]
    return first.startswith(b'{"orchlog":') or (
        first.startswith(b'{"checkpoint":') and b'"numel":' in head[:4096] and b'"blake3":' in head[:4096]
    )


def parse_line(trace: Trace, line: bytes, lineno: int) -> TraceRecord | None:
    """A record from one line, a header kept on the trace, or None with the problem reported."""
    doc = parse_object(trace, line, lineno)
    if doc is None:
        return None
    if "orchlog" in doc:
        trace.headers.append(doc)
        return None
    try:
        return record_from(doc, Location(trace.path, line=lineno))
    except (ValueError, TypeError, KeyError) as exc:
        trace.report(Location(trace.path, line=lineno), f"invalid record ({exc}); line skipped")
        return None


def batch_from_columns(cols: dict[str, Any], path: str) -> RecordBatch:
    """A RecordBatch from the native parser's columns (jsonl_layout_gen.hpp)."""
    n = int(cols["n"])
    dtype_names = [DTYPE_ALIASES.get(d, d) for d in cols["dtype_names"]]
    values = cols["values"]
    narrow = np.isin(cols["dtype"], [i for i, d in enumerate(dtype_names) if d in _NARROW_FLOATS])
    if narrow.any():
        mask = np.repeat(narrow, np.diff(cols["val_off"]))
        values[mask] = values[mask].astype(np.float32)
    meta = np.full(n, None, dtype=object)
    for row, text in cols["meta"]:
        meta[row] = orjson.loads(text)
    schema_columns = {}
    for c in COLUMNS:
        column = cols[c.name]
        if c.kind == "text":
            column = Strings(cols[f"{c.name}_names"], column)
        elif c.kind == "floats":
            column = column.reshape(n, c.length)
        schema_columns[c.name] = column
    return RecordBatch(
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
        fast, lines = (batch_from_columns(cols, trace.path) if cols["n"] else None), int(cols["lines"])
    slow = [rec for lineno, line in others if (rec := parse_line(trace, line, lineno)) is not None]
    if fast is None:
        return RecordBatch.from_records(slow), lines
    if not slow:
        return fast, lines
    both = RecordBatch.concat([fast, RecordBatch.from_records(slow)])
    return both.take(np.argsort(both.line, kind="stable")), lines


def _batches(trace: Trace) -> Iterator[RecordBatch]:
    first_line = 1
    for chunk in read_line_chunks(trace):
        report_unterminated(trace, chunk, first_line)
        batch, lines = _parse_chunk(trace, chunk, first_line)
        first_line += lines
        if len(batch):
            yield batch


def open_jsonl(path: Path) -> Trace:
    return Trace(str(path), "orchlog-jsonl", batches=_batches)


register(Format("orchlog-jsonl", _sniff, open_jsonl, priority=20))
