"""Legacy trace records: `{"name","shape","dtype","blake3","rms","num_elements"}` plus optional
`seq` (the token position), `layer` and `stage`, one per line or one (pretty-printed) object per
`.trace` file, usually many files under a directory.

These carry no values: a pair is equal when the hashes are, and otherwise
only the rms of each side says how far apart they are. Their natural key is
(seq, layer, stage), which `orchlog compare` uses when both sides are this
format. Negative layers (-1 embeddings/logits, -2 after all layers) are
kept in `meta["legacy_layer"]` and the layer itself is null.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from orchlog.read import fields
from orchlog.read.files import read_at_most
from orchlog.read.formats import Format, first_object, open_binary, register
from orchlog.read.formats.legacy_checkpoint import parse_shape
from orchlog.read.formats.lines import json_objects, loads_line
from orchlog.read.formats.orchlog_jsonl import number
from orchlog.read.trace import Location, Trace, TraceRecord
from orchlog.schema_gen import DTYPE_ALIASES, Stats

DEFAULT_KEY = ("token_idx", "layer", "stage")
_WHOLE_FILE_LIMIT = 64 << 20  # a pretty-printed file is read whole; they hold one or a few records


def record_from(doc: dict[str, Any], location: Location) -> TraceRecord:
    if "name" not in doc:
        raise ValueError("record lacks name")
    name = fields.text(doc["name"], "name")
    layer = fields.lenient_integer(doc.get("layer"), "layer")
    meta = {}
    if layer is not None and layer < 0:
        meta["legacy_layer"] = layer
        layer = None
    dtype = doc.get("dtype")
    dtype = DTYPE_ALIASES.get(dtype, dtype) if isinstance(dtype, str) else None
    rms = number(doc.get("rms"))
    numel = fields.lenient_integer(doc.get("num_elements"), "num_elements")
    return TraceRecord(
        checkpoint=name,
        token_idx=fields.lenient_integer(doc.get("seq"), "seq"),
        layer=layer,
        stage=fields.optional_text(doc.get("stage"), "stage") or name,
        dtype=dtype,
        shape=parse_shape(doc["shape"]) if doc.get("shape") is not None else None,
        numel=None if numel is None else fields.count(numel, "num_elements"),
        stats=None if rms is None else Stats(None, None, None, rms, None, 0, 0),
        blake3=fields.blake3(doc.get("blake3")),
        meta=meta,
        location=location,
    )


def _sniff(path: Path, head: bytes) -> bool:
    _, keys = first_object(head)
    return {"name", "blake3"} <= keys and bool(keys & {"rms", "num_elements"})


def _objects(trace: Trace) -> Iterator[tuple[Location, dict[str, Any]]]:
    with open_binary(Path(trace.path)) as f:
        first = f.readline()
    if _is_whole_object_line(first):
        for lineno, doc in json_objects(trace):
            yield Location(trace.path, line=lineno), doc
        return
    # One pretty-printed object (or an array of them) per file.
    with open_binary(Path(trace.path)) as f:
        text = read_at_most(f, _WHOLE_FILE_LIMIT + 1)
    trace.bytes_read = trace.size or len(text)
    where = Location(trace.path, line=1)
    try:
        doc = loads_line(text)
    except json.JSONDecodeError as exc:
        trace.report(where, f"malformed JSON ({exc}); file skipped")
        return
    for item in doc if isinstance(doc, list) else [doc]:
        if isinstance(item, dict):
            yield where, item
        else:
            trace.report(where, "not a JSON object; skipped")


def _is_whole_object_line(line: bytes) -> bool:
    try:
        return isinstance(loads_line(line), dict)
    except json.JSONDecodeError:
        return False


def _records(trace: Trace) -> Iterator[TraceRecord]:
    for where, doc in _objects(trace):
        try:
            yield record_from(doc, where)
        except (ValueError, TypeError, OverflowError) as exc:
            trace.report(where, f"invalid record ({exc}); skipped")


def open_legacy_trace(path: Path) -> Trace:
    trace = Trace(str(path), "legacy-trace", _records)
    trace.default_key = DEFAULT_KEY
    return trace


register(Format("legacy-trace", _sniff, open_legacy_trace, priority=31))
