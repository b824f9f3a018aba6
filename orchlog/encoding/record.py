"""Encode a record or a run header exactly as FORMAT.md says.

`encode_record` returns the JSONL line and the msgpack frame for one tensor
observation; `encode_header` does the same for a run header. Nothing here
names a field: the walk follows the schema tables, the generated ones
(`schema_gen.TABLES`, the default) or a schema the generator has just loaded
(how orchlog codegen builds the vectors for a schema it has not rendered
yet). What a field holds depends only on its type and its source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from orchlog import schema_gen
from orchlog.encoding import digest, dtypes, floats, frame
from orchlog.encoding import msgpack_canonical as mp
from orchlog.encoding.text import json_string, sort_key, to_text
from orchlog.knob_values import created_from_epoch, default_value
from orchlog.records import record
from orchlog.schema_gen import TABLES, HeaderInput, RecordInput, Scalar

__all__ = [
    "ALL_VALUES",
    "Encoded",
    "HeaderInput",
    "RecordInput",
    "check_meta",
    "created_from_epoch",
    "encode_header",
    "encode_record",
    "field_default",
    "header_values",
    "json_scalar",
    "leading_values",
    "numel",
    "record_values",
]

ALL_VALUES = -1
# The fields read off the tensor as given; every other computed field is a digest.
_TENSOR_FIELDS = ("dtype", "shape", "numel", "values", "data")


@record(frozen=True)
class Encoded:
    jsonl: bytes  # one line, with its trailing newline
    frame: bytes  # one msgpack map
    blake3: str


def numel(shape: Iterable[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _knob_value(schema: Any, setting: str) -> Any:
    knob = next(k for k in schema.env if k.setting == setting)
    return default_value(knob)


def field_default(f: Any, schema: Any = TABLES) -> Any:
    """What a record field holds when its emitter was given nothing for it."""
    if f.nullable:
        return None
    setting = f.run_default or (f.name if f.source == "run" else None)
    if setting is not None:
        return _knob_value(schema, setting)
    return {"str": "", "bool": False, "meta": {}}.get(f.type, 0)


def _given(r: Any) -> dict[str, Any]:
    return dict(r) if isinstance(r, Mapping) else dict(vars(r))


def _check_field(f: Any, value: Any) -> None:
    if value is None:
        if not f.nullable:
            raise ValueError(f"{f.name} must not be null")
        return
    if f.type in ("i32", "i64"):
        lo = f.min if f.min is not None else -(2 ** (63 if f.type == "i64" else 31))
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= f.int_max:
            raise ValueError(f"{f.name}={value!r} is out of range [{lo}, {f.int_max}]")
    elif f.type == "bool" and not isinstance(value, bool):
        raise ValueError(f"{f.name}={value!r} is not a bool")
    elif f.type == "str" and not isinstance(value, (str, bytes)):
        raise ValueError(f"{f.name}={value!r} is not text")


def _check_tensor(dtype: str, shape: tuple[int, ...], data: Any) -> None:
    if dtype not in schema_gen.DTYPE_SIZES:
        raise ValueError(f"unknown dtype {dtype!r}")
    if any((not isinstance(d, int)) or d < 0 for d in shape):
        raise ValueError(f"shape {list(shape)} has a negative or non-integer dimension")
    expected = numel(shape) * schema_gen.DTYPE_SIZES[dtype]
    if len(data) != expected:
        raise ValueError(f"{len(data)} data bytes for shape {list(shape)} of {dtype} (want {expected})")


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


def _json_values(values: np.ndarray, dtype: str) -> str:
    if dtypes.is_float(dtype):
        precision = "f64" if dtype == "f64" else "f32"
        return "[" + ",".join(floats.format_float(float(v), precision) for v in values) + "]"
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _json_object(fields: Iterable[Any], values: Mapping[str, Any], dtype: str, schema: Any) -> str:
    parts = [
        f"{json_string(f.name)}:{_value(_Json, f, values[f.name], dtype, schema)}"
        for f in fields
        if "jsonl" in f.encodings
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


def _mp_floats(values: Iterable[float], precision: str) -> bytes:
    items = np.asarray(list(values), dtype=np.float64)
    if precision == "f32":
        return _mp_values(items.astype(np.float32), "f32")
    return _mp_values(items, "f64")


def _mp_object(fields: Iterable[Any], values: Mapping[str, Any], dtype: str, schema: Any) -> bytes:
    present = [f for f in fields if "msgpack" in f.encodings]
    out = [mp.map_header(len(present))]
    for f in present:
        # A frame field is computed over every byte of the frame before its key.
        value = frame.compute(f.name, b"".join(out)) if f.source == "frame" else values[f.name]
        out.append(mp.string(f.name))
        out.append(_value(_Msgpack, f, value, dtype, schema))
    return b"".join(out)


# ------------------------------------------------- one walk, two encodings


class _Json:
    """How each kind of value is written in a JSONL line."""

    nil = "null"
    text = staticmethod(json_string)

    @staticmethod
    def integer(v: int) -> str:
        return str(v)

    uint32 = integer

    @staticmethod
    def f64(v: float) -> str:
        return floats.format_float(v, "f64")

    @staticmethod
    def boolean(v: bool) -> str:
        return "true" if v else "false"

    @staticmethod
    def floats(values: Iterable[float], precision: str, text: str) -> str:
        if text == "hex":  # the rows' bits, one string (the schema's `text: hex`)
            return '"' + floats.hex_bits(values, precision) + '"'
        return "[" + ",".join(floats.format_float(float(v), precision) for v in values) + "]"

    @staticmethod
    def shape(dims: Iterable[int]) -> str:
        return "[" + ",".join(str(int(d)) for d in dims) + "]"

    @staticmethod
    def binary(data: bytes) -> str:
        raise AssertionError("tensor bytes have no JSONL form")

    values = staticmethod(_json_values)
    meta = staticmethod(_json_meta)
    object = staticmethod(_json_object)


class _Msgpack:
    """How each kind of value is written in a msgpack frame."""

    nil = mp.nil()
    text = staticmethod(lambda s: mp.string(to_text(s)))
    integer = staticmethod(mp.integer)
    uint32 = staticmethod(mp.uint32)
    f64 = staticmethod(mp.float64)
    boolean = staticmethod(lambda v: mp.boolean(bool(v)))
    floats = staticmethod(lambda values, precision, text: _mp_floats(values, precision))  # text: JSONL's only
    shape = staticmethod(lambda dims: mp.array_header(len(dims)) + b"".join(mp.integer(int(d)) for d in dims))
    binary = staticmethod(lambda data: mp.binary_header(len(data)) + bytes(data))
    values = staticmethod(_mp_values)
    meta = staticmethod(_mp_meta)
    object = staticmethod(_mp_object)


def _value(w: Any, f: Any, value: Any, dtype: str, schema: Any) -> Any:
    """One field's value in the encoding `w` writes (_Json or _Msgpack), by the field's type."""
    if value is None:
        return w.nil
    t = f.type
    if t in ("str", "dtype", "hex256"):
        return w.text(value)
    if t in ("i32", "i64"):
        return w.integer(int(value))
    if t == "u32":
        return w.uint32(int(value))
    if t == "f64":
        return w.f64(value)
    if t == "bool":
        return w.boolean(value)
    if t == "floats":
        return w.floats(value, f.precision, f.text)
    if t == "shape":
        return w.shape(value)
    if t == "values":
        return w.values(value, dtype)
    if t == "stats":
        return w.object(schema.stats, dataclasses.asdict(value), dtype, schema)
    if t == "producer":
        return w.object(schema.producer, value, dtype, schema)
    if t == "meta":
        return w.meta(value)
    if t == "bytes":
        return w.binary(value)
    raise AssertionError(f"no form for field type {t}")


# ------------------------------------------------------------------ public


def leading_values(data: bytes | memoryview, dtype: str, n: int) -> np.ndarray:
    """The first n elements (all when n is ALL_VALUES), widened for printing."""
    flat = dtypes.from_bytes(data, dtype)
    if n != ALL_VALUES:
        flat = flat[: max(n, 0)]
    return dtypes.widen(flat, dtype)


def _tensor_fields(given: Mapping[str, Any]) -> dict[str, Any]:
    dtype, shape, data = given["dtype"], tuple(given["shape"]), given["data"]
    _check_tensor(dtype, shape, data)
    count = given.get("values", _knob_value(TABLES, "values"))
    return {
        "dtype": dtype,
        "shape": list(shape),
        "numel": numel(shape),
        "values": leading_values(data, dtype, count),
        "data": data,
    }


def record_values(r: RecordInput | Mapping[str, Any], schema: Any = TABLES) -> dict[str, Any]:
    """The record's field values, by name and in schema order, before encoding.

    `r` gives the label, the key parts, the run and writer fields (those it
    leaves out take their defaults), the tensor (`dtype`, `shape`, `data`),
    how many leading values to keep (`values`) and `meta`.
    """
    given = _given(r)
    tensor = _tensor_fields(given)
    out: dict[str, Any] = {}
    for f in schema.record:
        if f.source == "frame":
            continue  # computed as the frame is written
        if f.source == "tensor":
            out[f.name] = tensor[f.name]
        elif f.source == "digest":
            out[f.name] = digest.compute(f.name, tensor["data"], tensor["dtype"])
        elif f.source == "meta":
            check_meta(given.get(f.name) or {})
            out[f.name] = dict(given.get(f.name) or {})
        else:
            value = given[f.name] if f.name in given else field_default(f, schema)
            _check_field(f, value)
            out[f.name] = to_text(value) if f.type == "str" and value is not None else value
    return out


def encode_record(r: RecordInput | Mapping[str, Any], schema: Any = TABLES) -> Encoded:
    fields = record_values(r, schema)
    return Encoded(jsonl=record_line(fields, schema), frame=record_frame(fields, schema), blake3=fields["blake3"])


def record_line(fields: Mapping[str, Any], schema: Any = TABLES) -> bytes:
    """A record's JSONL line, newline included, from its field values (record_values')."""
    return (_json_object(schema.record, fields, fields["dtype"], schema) + "\n").encode("utf-8")


def record_frame(fields: Mapping[str, Any], schema: Any = TABLES) -> bytes:
    """A record's msgpack frame from its field values (record_values'), its checksum computed as it is written:
    with fields edited, a frame that disagrees with its tensor while its checksum holds (a faulty emitter's)."""
    return _mp_object(schema.record, fields, fields["dtype"], schema)


def header_values(h: HeaderInput | Mapping[str, Any], schema: Any = TABLES) -> dict[str, Any]:
    """The header's field values, by name and in schema order; `h` gives the language and the settings."""
    given = _given(h)
    out: dict[str, Any] = {}
    for f in schema.header:
        if f.source == "frame":
            continue  # computed as the frame is written
        if f.type == "producer":
            out[f.name] = {"language": given["language"], "name": "orchlog", "version": schema.library_version}
        elif f.source == "constant":
            out[f.name] = schema.version
        elif f.type == "meta":
            check_meta(given.get(f.name) or {})
            out[f.name] = dict(given.get(f.name) or {})
        else:
            value = given.get(f.name)
            out[f.name] = to_text(value) if f.type == "str" and value is not None else value
    return out


def encode_header(h: HeaderInput | Mapping[str, Any], schema: Any = TABLES) -> tuple[bytes, bytes]:
    """(JSONL line with newline, msgpack frame) of a run header."""
    fields = header_values(h, schema)
    line = _json_object(schema.header, fields, "f64", schema) + "\n"
    return line.encode("utf-8"), _mp_object(schema.header, fields, "f64", schema)
