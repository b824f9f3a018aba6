"""Per-language spellings of schema types and knobs, used by the templates."""

from __future__ import annotations

import json
from typing import Any

from orchlog.codegen.schema import EnvKnob, Field, Schema

_PY = {
    "str": "str",
    "i32": "int",
    "i64": "int",
    "f64": "float",
    "bool": "bool",
    "floats": "tuple[float, ...]",
    "dtype": "str",
    "shape": "tuple[int, ...]",
    "values": "tuple[float | int, ...]",
    "stats": "Stats",
    "hex256": "str",
    "meta": "dict[str, bool | int | float | str]",
    "bytes": "bytes",
    "producer": "Producer",
}
_CPP = {
    "str": "std::string_view",
    "i32": "std::int32_t",
    "i64": "std::int64_t",
    "f64": "double",
    "bool": "bool",
    "floats": "FloatsView",
    "dtype": "DType",
    "shape": "ShapeView",
    "values": "ValuesView",
    "stats": "Stats",
    "hex256": "std::string_view",
    "meta": "MetaView",
    "bytes": "BytesView",
    "producer": "Producer",
}
_RUST = {
    "str": "&'a str",
    "i32": "i32",
    "i64": "i64",
    "f64": "f64",
    "bool": "bool",
    "floats": "&'a [f64]",
    "dtype": "DType",
    "shape": "&'a [i64]",
    "values": "ValuesView<'a>",
    "stats": "Stats",
    "hex256": "&'a str",
    "meta": "&'a [MetaEntry<'a>]",
    "bytes": "&'a [u8]",
    "producer": "Producer<'a>",
}
# Visitor methods, one per field type (nullable scalars get an opt_ twin).
_VISIT = {"bool": "boolean", "floats": "floats_{precision}"}
_NULLABLE_VISITS = ("str", "i32", "i64", "f64", "bool")
# C++ types of a knob's setting: as configure() is given it, and once resolved.
_CPP_GIVEN = {
    "path": "std::string",
    "str": "std::string",
    "opt_str": "std::string",
    "selector": "std::string",
    "int": "std::int32_t",
    "count_or_all": "std::int64_t",
    "bool": "bool",
    "epoch": "std::int64_t",
}
_CPP_RESOLVED = {
    "opt_str": "std::optional<std::string>",
    "selector": "std::optional<std::string>",
    "epoch": "std::string",
}
# Rust types of a knob's setting in `Config`.
_RUST_SETTING = {
    "path": "Option<PathBuf>",
    "str": "String",
    "opt_str": "Option<String>",
    "selector": "Option<String>",
    "int": "i32",
    "count_or_all": "KeepValues",
    "bool": "bool",
    "epoch": "Option<i64>",
}
# C types of key parts in the C ABI (text is a NUL-terminated string; NULL is none).
_C = {"str": "const char*", "i32": "int32_t", "i64": "int64_t", "bool": "int32_t"}


def _py_type(f: Field) -> str:
    base = _PY[f.type]
    return f"{base} | None" if f.nullable else base


def _cpp_type(f: Field) -> str:
    base = _CPP[f.type]
    # Views of binary data are never null in an emitter; nullability of
    # `data` only matters at rest (Parquet rows packed from summaries).
    if f.nullable and f.type != "bytes":
        return f"std::optional<{base}>"
    return base


def _cpp_scalar(f: Field) -> str:
    """The C++ type of a scalar field's value (owned text for str)."""
    return _CPP[f.type]


def _rust_type(f: Field) -> str:
    base = _RUST[f.type]
    if f.nullable and f.type != "bytes":
        return f"Option<{base}>"
    return base


def _visit_method(f: Field) -> str:
    """Name of the visitor method that writes a field of this type."""
    base = _VISIT.get(f.type, f.type).format(precision=f.precision)
    if f.type == "floats" and f.text == "hex":
        base += "_hex"
    if f.nullable and f.type in _NULLABLE_VISITS:
        return "opt_" + base
    return base


def _c_type(f: Field) -> str:
    return _C[f.type]


def _cpp_given(k: EnvKnob) -> str:
    return _pascal(k.setting) if k.type == "enum" else _CPP_GIVEN[k.type]


def _cpp_resolved(k: EnvKnob) -> str:
    return _pascal(k.setting) if k.type == "enum" else _CPP_RESOLVED.get(k.type, _CPP_GIVEN[k.type])


def _rust_setting(k: EnvKnob) -> str:
    return _pascal(k.setting) if k.type == "enum" else _RUST_SETTING[k.type]


def _cpp_key_arg(f: Field) -> str:
    """The adapter that turns what a caller has into a key part of this type (types.hpp)."""
    return {"str": "optional_text_arg", "bool": "flag_arg"}.get(f.type, f"index_arg<{_CPP[f.type]}>")


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


def _upper(name: str) -> str:
    return name.upper()


def _py_value(f: Field, schema: Schema) -> str:
    """The Python default of an emitter input field: null, or the run default the field falls back to."""
    if f.nullable:
        return "None"
    if f.source == "call":
        return repr(f.default)
    setting = f.run_default or (f.name if f.source == "run" else None)
    if setting is not None:
        return repr(knob_default(schema.knob(setting)))
    return {"str": "''", "bool": "False", "floats": "()"}.get(f.type, "0")


def _run_defaults(schema: Schema) -> tuple[Field, ...]:
    """One key part per run setting that key parts fall back on and no run field carries already: the
    settings a record's input needs besides its run fields (`rank`; `num_shards` falls back on the
    `world_size` run field)."""
    have = {f.name for f in schema.fields_from("run")}
    out = []
    for f in schema.fields_from("key"):
        if f.run_default is not None and f.run_default not in have:
            have.add(f.run_default)
            out.append(f)
    return tuple(out)


def _rust_at_least(f: Field) -> str:
    """A filter making a key part below its field's least value none (nothing for a least value of 0)."""
    return f".filter(|v| *v >= {f.min})" if f.min else ""


def _reader_default(f: Field, schema: Schema) -> str:
    """The C++ literal a native reader gives an integer or bool identity field that a record lacks: what
    the Python reader gives it (-1 for null, as in the batch columns)."""
    if f.nullable or f.source == "writer":
        return "-1"
    value = _py_value(f, schema)
    return {"True": "1", "False": "0"}.get(value, value)


def _frame_enum(name: str) -> str:
    return "kFrame" + _pascal(name)


def _frame_keys(schema: Schema) -> list[tuple[int, list[tuple[str, str]]]]:
    """The binary stream's record keys and the header's mark, grouped by length: (length, [(key, enum)])."""
    keys = [(f.name, _frame_enum(f.name)) for f in schema.record_fields("msgpack")]
    keys.append((schema.header[0].name, "kFrameHeaderKey"))
    lengths = sorted({len(k) for k, _ in keys})
    return [(n, [(k, e) for k, e in keys if len(k) == n]) for n in lengths]


def _header_inputs(schema: Schema) -> list[tuple[Field, str | None]]:
    """The header's settings as Python input fields with their defaults' literals, those without first."""
    out = []
    for f in schema.header:
        if f.source != "setting":
            continue
        knob = next((k for k in schema.env if k.setting == f.name), None)
        if f.type == "meta" or f.nullable:
            default: str | None = "{}" if f.type == "meta" else "None"
        else:
            default = None if knob is None or knob.default is None else repr(knob_default(knob))
        out.append((f, default))
    return sorted(out, key=lambda item: item[1] is not None)


def knob_default(k: EnvKnob) -> Any:
    """A knob's default as the value it stands for (None for no default)."""
    if k.default is None:
        return None
    if k.type in ("int", "count_or_all"):
        return int(k.default)
    if k.type == "bool":
        return k.default == "1"
    return k.default


def knob_expectation(k: EnvKnob) -> str:
    """What a malformed value of the knob is not, in the words every emitter's warning uses."""
    # The emitter's knob rules import the generated tables: only once they are written.
    from orchlog.emit.knobs import expectation

    return expectation(k)


FILTERS = {
    "py_type": _py_type,
    "cpp_type": _cpp_type,
    "cpp_scalar": _cpp_scalar,
    "rust_type": _rust_type,
    "c_type": _c_type,
    "visit": _visit_method,
    "rust_ident": _rust_ident,
    "py": _py_literal,
    "py_tuple": lambda seq: repr(tuple(seq)),
    "json": _json_literal,
    "wrap": _wrap,
    "pascal": _pascal,
    "upper": _upper,
    "rstrip_nl": lambda text: str(text).rstrip("\n"),
    "expect": knob_expectation,
    "cpp_given": _cpp_given,
    "cpp_resolved": _cpp_resolved,
    "rust_setting": _rust_setting,
    "key_arg": _cpp_key_arg,
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
    key_parts = schema.fields_from("key")
    settings = {k.setting: k for k in schema.env}
    return {
        "jsonl_fields": schema.record_fields("jsonl"),
        "msgpack_fields": schema.record_fields("msgpack"),
        "label": schema.record[0],
        "key_parts": key_parts,
        "positional_parts": tuple(f for f in key_parts if f.positional),
        "named_parts": tuple(f for f in key_parts if not f.positional),
        "run_fields": schema.fields_from("run"),
        "run_defaults": _run_defaults(schema),
        "writer_fields": schema.fields_from("writer"),
        "digest_fields": schema.fields_from("digest"),
        # The identity of a record: what a selector, an alignment key or a reader's column may name.
        "identity_fields": schema.fields_from("label", "run", "key", "writer"),
        # What a reader's record and columns carry: the identity and what the call itself set (`grafted`).
        "column_fields": schema.fields_from("label", "run", "key", "writer", "call"),
        "call_fields": schema.fields_from("call"),
        "digest_floats": tuple(f for f in schema.fields_from("digest") if f.type == "floats"),
        "header_settings": tuple(f for f in schema.header if f.source == "setting"),
        "header_view_fields": tuple(f for f in schema.header if f.source != "frame"),
        "header_inputs": _header_inputs(schema),
        "settings": settings,
        "py_value": lambda f: _py_value(f, schema),
        "reader_default": lambda f: _reader_default(f, schema),
        "frame_enum": _frame_enum,
        "at_least": _rust_at_least,
        "frame_keys": _frame_keys(schema),
        "knob_default": knob_default,
        "dtype_aliases": aliases,
        "nonfinite": enc["jsonl"]["nonfinite"],
        "negative_zero": enc["jsonl"]["negative_zero"],
        "both_mode_suffix": enc["msgpack"]["both_mode_suffix"],
        "parquet_keys": enc["parquet"]["metadata_keys"],
        "modes": schema.knob("mode").choices,
    }
