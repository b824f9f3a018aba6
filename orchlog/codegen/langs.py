"""Per-language spellings of schema types, used by the templates."""

from __future__ import annotations

import json
from typing import Any

from orchlog.schema import Field, Schema


def _py_type(f: Field) -> str:
    base = {
        "str": "str",
        "i32": "int",
        "i64": "int",
        "f64": "float",
        "dtype": "str",
        "shape": "tuple[int, ...]",
        "values": "tuple[float | int, ...]",
        "stats": "Stats",
        "hex256": "str",
        "meta": "dict[str, bool | int | float | str]",
        "bytes": "bytes",
        "producer": "Producer",
    }[f.type]
    return f"{base} | None" if f.nullable else base


def _cpp_type(f: Field) -> str:
    base = {
        "str": "std::string_view",
        "i32": "std::int32_t",
        "i64": "std::int64_t",
        "f64": "double",
        "dtype": "DType",
        "shape": "ShapeView",
        "values": "ValuesView",
        "stats": "Stats",
        "hex256": "std::string_view",
        "meta": "MetaView",
        "bytes": "BytesView",
        "producer": "Producer",
    }[f.type]
    # Views of binary data are never null in an emitter; nullability of
    # `data` only matters at rest (Parquet rows packed from summaries).
    if f.nullable and f.type not in ("bytes",):
        return f"std::optional<{base}>"
    return base


def _rust_type(f: Field) -> str:
    base = {
        "str": "&'a str",
        "i32": "i32",
        "i64": "i64",
        "f64": "f64",
        "dtype": "DType",
        "shape": "&'a [i64]",
        "values": "ValuesView<'a>",
        "stats": "Stats",
        "hex256": "&'a str",
        "meta": "&'a [MetaEntry<'a>]",
        "bytes": "&'a [u8]",
        "producer": "Producer<'a>",
    }[f.type]
    if f.nullable and f.type not in ("bytes",):
        return f"Option<{base}>"
    return base


def _visit_method(f: Field) -> str:
    """Name of the visitor method that writes a field of this type."""
    base = {
        "str": "str",
        "i32": "i32",
        "i64": "i64",
        "f64": "f64",
        "dtype": "dtype",
        "shape": "shape",
        "values": "values",
        "stats": "stats",
        "hex256": "hex256",
        "meta": "meta",
        "bytes": "bytes",
        "producer": "producer",
    }[f.type]
    if f.nullable and f.type in ("str", "i32", "i64", "f64"):
        return "opt_" + base
    return base


def _rust_ident(name: str) -> str:
    return {"type": "r#type", "ref": "r#ref"}.get(name, name)


def _py_literal(value: Any) -> str:
    return repr(value)


def _json_literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _wrap(text: str, width: int = 76) -> list[str]:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    if line:
        lines.append(line)
    return lines


def _pascal(name: str) -> str:
    return "".join(p.capitalize() for p in name.lower().split("_"))


FILTERS = {
    "py_type": _py_type,
    "cpp_type": _cpp_type,
    "rust_type": _rust_type,
    "visit": _visit_method,
    "rust_ident": _rust_ident,
    "py": _py_literal,
    "py_tuple": lambda seq: repr(tuple(seq)),
    "json": _json_literal,
    "wrap": _wrap,
    "pascal": _pascal,
    "rstrip_nl": lambda text: str(text).rstrip("\n"),
}


def _raise(message: str) -> None:
    raise ValueError(message)


GLOBALS = {"raise": _raise}
TESTS = {"contains": lambda seq, item: item in seq}


def context(schema: Schema) -> dict[str, Any]:
    """Values the templates need beyond the schema object itself."""
    enc = schema.encodings
    aliases: dict[str, str] = {}
    for d in schema.dtypes:
        aliases[d.name] = d.name
        for a in d.aliases:
            aliases[a] = d.name
    return {
        "jsonl_fields": schema.record_fields("jsonl"),
        "msgpack_fields": schema.record_fields("msgpack"),
        "dtype_aliases": aliases,
        "nonfinite": enc["jsonl"]["nonfinite"],
        "negative_zero": enc["jsonl"]["negative_zero"],
        "both_mode_suffix": enc["msgpack"]["both_mode_suffix"],
        "parquet_keys": enc["parquet"]["metadata_keys"],
        "modes": next(k.choices for k in schema.env if k.name == "ORCH_LOG_MODE"),
    }
