"""orchlog JSONL: a header line, then one record per line (FORMAT.md)."""
from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from orchlog.formats import Format, open_binary, register
from orchlog.schema_gen import Stats
from orchlog.trace import Location, Trace, TraceRecord

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_REQUIRED = ("checkpoint", "dtype", "shape", "numel", "values", "stats", "blake3")


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
        min=number(doc.get("min")), max=number(doc.get("max")), mean=number(doc.get("mean")),
        rms=number(doc.get("rms")), abs_max=number(doc.get("abs_max")),
        nan_count=int(doc.get("nan_count", 0)), inf_count=int(doc.get("inf_count", 0)),
    )


def record_from(doc: dict[str, Any], location: Location) -> TraceRecord:
    """A TraceRecord from a decoded record object (JSON line or msgpack map)."""
    missing = [k for k in _REQUIRED if k not in doc]
    if missing:
        raise ValueError(f"record lacks {', '.join(missing)}")
    values = doc["values"]
    return TraceRecord(
        checkpoint=str(doc["checkpoint"]),
        team=doc.get("team") or "",
        token_idx=doc.get("token_idx"),
        layer=doc.get("layer"),
        stage=doc.get("stage"),
        step=doc.get("step"),
        rank=int(doc.get("rank", 0)),
        world_size=int(doc.get("world_size", 1)),
        seq=doc.get("seq"),
        dtype=doc["dtype"],
        shape=tuple(int(d) for d in doc["shape"]),
        numel=int(doc["numel"]),
        values=_values_array(values),
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
    return first.startswith(b'{"orchlog":') or (first.startswith(b'{"checkpoint":') and b'"numel":' in head[:4096]
                                                  and b'"blake3":' in head[:4096])


def _records(trace: Trace) -> Iterator[TraceRecord]:
    path = Path(trace.path)
    with open_binary(path) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="\n")
        for lineno, line in enumerate(text, start=1):
            if not line.strip():
                continue
            where = Location(trace.path, line=lineno)
            if not line.endswith("\n"):
                trace.report(where, "last line has no newline (truncated write?); read anyway")
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                trace.report(where, f"malformed JSON ({exc.msg} at column {exc.colno}); line skipped")
                continue
            if not isinstance(doc, dict):
                trace.report(where, "line is not a JSON object; skipped")
                continue
            if "orchlog" in doc:
                trace.headers.append(doc)
                continue
            try:
                yield record_from(doc, where)
            except (ValueError, TypeError, KeyError) as exc:
                trace.report(where, f"invalid record ({exc}); line skipped")


def open_jsonl(path: Path) -> Trace:
    return Trace(str(path), "orchlog-jsonl", _records)


register(Format("orchlog-jsonl", _sniff, open_jsonl, priority=20))
