"""Legacy per-token logits: JSONL (often gzipped) lines `{"token_idx","token_id","logits":[...]}`
with a `metadata.json` beside the file (dtype, prompt_len, seed, kv_aligned, mode, ...).

Each line becomes a `logits` record holding every value, so it is compared
as a full tensor. The metadata becomes the trace's header; the token id
is the record's `token_id`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.read import fields
from orchlog.read.formats import first_object, register_records
from orchlog.read.formats.lines import json_objects, loads_line
from orchlog.read.formats.orchlog_jsonl import number
from orchlog.read.trace import Location, Trace, TraceRecord

METADATA = "metadata.json"
CHECKPOINT = "logits"
_PLAIN_NUMBERS = {float, int}


def _sniff(path: Path, head: bytes) -> bool:
    _, keys = first_object(head)
    return {"token_idx", "logits"} <= keys


def _read_metadata(trace: Trace) -> None:
    meta_path = Path(trace.path).parent / METADATA
    if not meta_path.is_file():
        return
    try:
        doc = loads_line(meta_path.read_bytes())
    except (OSError, ValueError) as exc:
        trace.report(Location(str(meta_path)), f"unreadable metadata ({exc}); ignored")
        return
    try:
        trace.headers.append(fields.header(doc))
    except ValueError as exc:
        trace.report(Location(str(meta_path)), f"unusable metadata ({exc}); ignored")


def _logits_array(values: list[Any]) -> tuple[np.ndarray, str]:
    """The logits as written, and the narrowest float dtype that holds every one exactly."""
    if set(map(type, values)) <= _PLAIN_NUMBERS:
        # The usual line: numbers only. Converting them in one call is ten times faster than
        # one `number` call per value, which only the spelled-out non-finite values need.
        arr = np.fromiter(values, dtype=np.float64, count=len(values))
    else:
        arr = np.array([number(v) for v in values], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = arr.astype(np.float32)
    if np.array_equal(narrow.astype(np.float64), arr, equal_nan=True):
        return arr, "f32"
    return arr, "f64"


def _records(trace: Trace) -> Iterator[TraceRecord]:
    _read_metadata(trace)
    for lineno, doc in json_objects(trace):
        where = Location(trace.path, line=lineno)
        try:
            if "logits" not in doc or not isinstance(doc["logits"], list):
                raise ValueError("line lacks a logits list")
            values, dtype = _logits_array(doc["logits"])
            yield TraceRecord(
                checkpoint=CHECKPOINT,
                token_idx=fields.lenient_integer(doc.get("token_idx"), "token_idx"),
                token_id=fields.lenient_integer(doc.get("token_id"), "token_id"),
                dtype=dtype,
                shape=(len(values),),
                numel=len(values),
                values=values,
                location=where,
            )
        except (ValueError, TypeError, OverflowError) as exc:
            trace.report(where, f"invalid record ({exc}); line skipped")


register_records("legacy-logits", _sniff, _records, priority=32, companions=(METADATA,))
