"""Encode a record or a run header exactly as FORMAT.md says.

`encode_record` returns the JSONL line and the msgpack frame for one tensor
observation; `encode_header` does the same for a run header. Field order
and types come from the generated schema tables, so the schema stays the
only place they are written down.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import blake3 as _blake3
import numpy as np

from orchlog import schema_gen
from orchlog.encoding import dtypes, floats
from orchlog.encoding import msgpack_canonical as mp
from orchlog.encoding import stats as _stats
from orchlog.encoding.text import json_string, sort_key, to_text

ALL_VALUES = -1

Scalar = bool | int | float | str


@dataclasses.dataclass
class RecordInput:
    """Everything an emitter is given for one record."""

    checkpoint: str | bytes
    dtype: str
    shape: tuple[int, ...]
    data: bytes | memoryview  # a view of the caller's buffer is read, never kept
    team: str = ""
    token_idx: int | None = None
    layer: int | None = None
    stage: str | None = None
    step: int | None = None
    rank: int = 0
    world_size: int = 1
    seq: int = 0
    values: int = 10  # how many leading values to keep; ALL_VALUES keeps all
    meta: Mapping[str, Scalar] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class HeaderInput:
    """Everything an emitter knows about its run when it opens a file."""

    language: str
    created: str
    team: str = ""
    model: str | None = None
    git_commit: str | None = None
    rank: int = 0
    world_size: int = 1
    values: int = 10
    select: str | None = None
    config: Mapping[str, Scalar] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Encoded:
    jsonl: bytes  # one line, with its trailing newline
    frame: bytes  # one msgpack map
    blake3: str


def numel(shape: Iterable[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _check_int(name: str, value: int | None, lo: int, hi: int, nullable: bool) -> None:
    if value is None:
        if not nullable:
            raise ValueError(f"{name} must not be null")
        return
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name}={value!r} is out of range [{lo}, {hi}]")


def _validate(r: RecordInput) -> None:
    if r.dtype not in schema_gen.DTYPE_SIZES:
        raise ValueError(f"unknown dtype {r.dtype!r}")
    if any((not isinstance(d, int)) or d < 0 for d in r.shape):
        raise ValueError(f"shape {list(r.shape)} has a negative or non-integer dimension")
    expected = numel(r.shape) * schema_gen.DTYPE_SIZES[r.dtype]
    if len(r.data) != expected:
        raise ValueError(f"{len(r.data)} data bytes for shape {list(r.shape)} of {r.dtype} (want {expected})")
    i32, i64 = 2**31 - 1, 2**63 - 1
    _check_int("token_idx", r.token_idx, 0, i64, True)
    _check_int("layer", r.layer, 0, i32, True)
    _check_int("step", r.step, 0, i32, True)
    _check_int("rank", r.rank, 0, i32, False)
    _check_int("world_size", r.world_size, 1, i32, False)
    _check_int("seq", r.seq, 0, i64, False)
    check_meta(r.meta)


def check_meta(meta: Mapping[str, Scalar]) -> None:
    """ValueError unless every key is a string and every value a bool, an i64, a float or a string."""
    for k, v in meta.items():
        if not isinstance(k, str):
            raise ValueError(f"meta key {k!r} is not a string")
        if isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63:
            raise ValueError(f"meta[{k!r}]={v} does not fit in i64")
        if not isinstance(v, (bool, int, float, str)):
            raise ValueError(f"meta[{k!r}] has type {type(v).__name__}; only bool, int, float and str are allowed")


# ---------------------------------------------------------------- JSON text


def json_scalar(v: Scalar | None) -> str:
    """Canonical JSON text of one meta or config scalar (also Parquet's `meta` map values)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return floats.format_float(v, "f64")
    return json_string(v)


def _json_meta(meta: Mapping[str, Scalar]) -> str:
    parts = [f"{json_string(k)}:{json_scalar(meta[k])}" for k in sorted(meta, key=sort_key)]
    return "{" + ",".join(parts) + "}"


def _json_f64(v: float | None) -> str:
    return "null" if v is None else floats.format_float(v, "f64")


def _json_values(values: np.ndarray, dtype: str) -> str:
    if dtypes.is_float(dtype):
        precision = "f64" if dtype == "f64" else "f32"
        return "[" + ",".join(floats.format_float(float(v), precision) for v in values) + "]"
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _json_value(ftype: str, value: Any, dtype: str) -> str:
    if value is None:
        return "null"
    if ftype in ("str", "dtype", "hex256"):
        return json_string(value)
    if ftype in ("i32", "i64"):
        return str(int(value))
    if ftype == "f64":
        return _json_f64(value)
    if ftype == "shape":
        return "[" + ",".join(str(int(d)) for d in value) + "]"
    if ftype == "values":
        return _json_values(value, dtype)
    if ftype == "stats":
        return _json_object(schema_gen.STATS_FIELDS, dataclasses.asdict(value), dtype)
    if ftype == "producer":
        return _json_object(schema_gen.PRODUCER_FIELDS, value, dtype)
    if ftype == "meta":
        return _json_meta(value)
    raise AssertionError(f"no JSON form for field type {ftype}")


def _json_object(fields: Sequence[schema_gen.FieldSpec], values: Mapping[str, Any], dtype: str = "f64") -> str:
    parts = [
        f"{json_string(f.name)}:{_json_value(f.type, values[f.name], dtype)}" for f in fields if "jsonl" in f.encodings
    ]
    return "{" + ",".join(parts) + "}"


# --------------------------------------------------------------- msgpack


def _mp_meta(meta: Mapping[str, Scalar]) -> bytes:
    out = [mp.map_header(len(meta))]
    for k in sorted(meta, key=sort_key):
        v = meta[k]
        out.append(mp.string(to_text(k)))
        if isinstance(v, bool):
            out.append(mp.boolean(v))
        elif isinstance(v, int):
            out.append(mp.integer(v))
        elif isinstance(v, float):
            out.append(mp.float64(v))
        else:
            out.append(mp.string(to_text(v)))
    return b"".join(out)


def _mp_values(values: np.ndarray, dtype: str) -> bytes:
    out = [mp.array_header(len(values))]
    if dtype == "f64":
        out.extend(mp.float64_bits(int(b)) for b in values.view(np.uint64))
    elif dtypes.is_float(dtype):
        out.extend(mp.float32_bits(int(b)) for b in values.astype(np.float32).view(np.uint32))
    else:
        out.extend(mp.integer(int(v)) for v in values)
    return b"".join(out)


def _mp_value(ftype: str, value: Any, dtype: str) -> bytes:
    if value is None:
        return mp.nil()
    if ftype in ("str", "dtype", "hex256"):
        return mp.string(to_text(value))
    if ftype in ("i32", "i64"):
        return mp.integer(int(value))
    if ftype == "f64":
        return mp.float64(value)
    if ftype == "shape":
        return mp.array_header(len(value)) + b"".join(mp.integer(int(d)) for d in value)
    if ftype == "values":
        return _mp_values(value, dtype)
    if ftype == "stats":
        return _mp_object(schema_gen.STATS_FIELDS, dataclasses.asdict(value), dtype)
    if ftype == "producer":
        return _mp_object(schema_gen.PRODUCER_FIELDS, value, dtype)
    if ftype == "meta":
        return _mp_meta(value)
    if ftype == "bytes":
        return mp.binary_header(len(value)) + bytes(value)
    raise AssertionError(f"no msgpack form for field type {ftype}")


def _mp_object(fields: Sequence[schema_gen.FieldSpec], values: Mapping[str, Any], dtype: str = "f64") -> bytes:
    present = [f for f in fields if "msgpack" in f.encodings]
    out = [mp.map_header(len(present))]
    for f in present:
        out.append(mp.string(f.name))
        out.append(_mp_value(f.type, values[f.name], dtype))
    return b"".join(out)


# ------------------------------------------------------------------ public


def leading_values(data: bytes | memoryview, dtype: str, n: int) -> np.ndarray:
    """The first n elements (all when n is ALL_VALUES), widened for printing."""
    flat = dtypes.from_bytes(data, dtype)
    if n != ALL_VALUES:
        flat = flat[: max(n, 0)]
    return dtypes.widen(flat, dtype)


def record_values(r: RecordInput) -> dict[str, Any]:
    """The record's field values, by name, before encoding."""
    _validate(r)
    return {
        "checkpoint": to_text(r.checkpoint),
        "team": to_text(r.team),
        "token_idx": r.token_idx,
        "layer": r.layer,
        "stage": None if r.stage is None else to_text(r.stage),
        "step": r.step,
        "rank": r.rank,
        "world_size": r.world_size,
        "seq": r.seq,
        "dtype": r.dtype,
        "shape": list(r.shape),
        "numel": numel(r.shape),
        "values": leading_values(r.data, r.dtype, r.values),
        "stats": _stats.compute(r.data, r.dtype),
        "blake3": _blake3.blake3(r.data).hexdigest(),
        "meta": dict(r.meta),
        "data": r.data,
    }


def encode_record(r: RecordInput) -> Encoded:
    fields = record_values(r)
    assert list(fields) == [f.name for f in schema_gen.RECORD_FIELDS], "record fields out of step with the schema"
    line = _json_object(schema_gen.RECORD_FIELDS, fields, r.dtype) + "\n"
    frame = _mp_object(schema_gen.RECORD_FIELDS, fields, r.dtype)
    return Encoded(jsonl=line.encode("utf-8"), frame=frame, blake3=fields["blake3"])


def header_values(h: HeaderInput) -> dict[str, Any]:
    check_meta(h.config)
    return {
        "orchlog": schema_gen.SCHEMA_VERSION,
        "producer": {"language": h.language, "name": "orchlog", "version": schema_gen.LIBRARY_VERSION},
        "team": to_text(h.team),
        "model": None if h.model is None else to_text(h.model),
        "git_commit": None if h.git_commit is None else to_text(h.git_commit),
        "created": h.created,
        "rank": h.rank,
        "world_size": h.world_size,
        "values": h.values,
        "select": None if h.select is None else to_text(h.select),
        "config": dict(h.config),
    }


def encode_header(h: HeaderInput) -> tuple[bytes, bytes]:
    """(JSONL line with newline, msgpack frame) of a run header."""
    fields = header_values(h)
    assert list(fields) == [f.name for f in schema_gen.HEADER_FIELDS], "header fields out of step with the schema"
    line = _json_object(schema_gen.HEADER_FIELDS, fields) + "\n"
    return line.encode("utf-8"), _mp_object(schema_gen.HEADER_FIELDS, fields)


def created_from_epoch(seconds: int) -> str:
    """RFC 3339 UTC with seconds, as the header's `created` field wants it."""
    import datetime as _dt

    return _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
