"""Legacy checkpoint JSONL: `{"checkpoint","team","token_idx","dtype","shape":"[896]","values":[...]}` per line.

What the first parity scripts wrote (seed spec "compare_parity"): the shape
is a string, the values are the first N elements, and there is no hash and
no stats. Other orchlog key fields (layer, stage, step, rank) are taken when
a line has them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.read import fields
from orchlog.read.formats import first_object, register_records
from orchlog.read.formats.lines import json_objects
from orchlog.read.formats.orchlog_jsonl import exact_values, number
from orchlog.read.trace import Location, Trace, TraceRecord
from orchlog.schema_gen import DTYPE_ALIASES

_DIM = re.compile(r"\d+")


def parse_shape(shape: Any) -> tuple[int, ...]:
    """`"[896]"`, `"[1, 896]"`, `"(896,)"`, `"896"` or a list, as a tuple of ints."""
    if isinstance(shape, str):
        return fields.shape([int(d) for d in _DIM.findall(shape[:4096])])
    if isinstance(shape, (list, tuple)):
        return fields.shape([fields.lenient_integer(d, "a shape dimension") for d in shape])
    raise ValueError(f"shape {fields.shown(shape)} is neither a string nor a list")


def record_from(doc: dict[str, Any], location: Location) -> TraceRecord:
    if "checkpoint" not in doc or "values" not in doc:
        raise ValueError("line lacks checkpoint or values")
    if not isinstance(doc["values"], list):
        raise ValueError(f"values {fields.shown(doc['values'])} is not a list")
    dtype = doc.get("dtype")
    dtype = DTYPE_ALIASES.get(dtype, dtype) if isinstance(dtype, str) else None
    shape = parse_shape(doc["shape"]) if doc.get("shape") is not None else None
    values = np.array([number(v) for v in doc["values"]], dtype=np.float64)
    return TraceRecord(
        checkpoint=_name(doc["checkpoint"], "checkpoint"),
        team=_name(doc.get("team") or "", "team"),
        token_idx=fields.lenient_integer(doc.get("token_idx"), "token_idx"),
        layer=fields.lenient_integer(doc.get("layer"), "layer"),
        stage=fields.optional_text(doc.get("stage"), "stage"),
        step=fields.lenient_integer(doc.get("step"), "step"),
        rank=fields.lenient_integer(doc.get("rank") or 0, "rank") or 0,
        dtype=dtype,
        shape=shape,
        numel=math.prod(shape) if shape is not None else None,
        values=exact_values(values, dtype),
        location=location,
    )


def _name(v: Any, what: str) -> str:
    """Legacy names: text, or a number some writers put there (`"checkpoint": 3`)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    return fields.text(v, what)


def _sniff(path: Path, head: bytes) -> bool:
    doc, keys = first_object(head)
    if not {"checkpoint", "values"} <= keys or "numel" in keys or "blake3" in keys:
        return False
    return doc is None or not isinstance(doc.get("shape"), list) or "team" in keys


def _records(trace: Trace) -> Iterator[TraceRecord]:
    for lineno, doc in json_objects(trace):
        where = Location(trace.path, line=lineno)
        try:
            yield record_from(doc, where)
        except (ValueError, TypeError, OverflowError) as exc:
            trace.report(where, f"invalid record ({exc}); line skipped")


register_records("legacy-checkpoint-jsonl", _sniff, _records, priority=30)
