"""Load schema/orchlog.schema.yaml into plain typed objects: the generator's input.

The YAML file is the only source of truth; this module validates its shape
so that a typo there fails loudly in codegen rather than quietly in C++.
Nothing at run time reads the YAML: the library uses what codegen rendered
from it (orchlog/schema_gen.py and its C++ and Rust twins).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

from orchlog.records import record

SCHEMA_PATH = Path(__file__).resolve().parent.parent.parent / "schema" / "orchlog.schema.yaml"

FIELD_TYPES = {
    "str",
    "i32",
    "i64",
    "u32",
    "f64",
    "bool",
    "floats",
    "dtype",
    "shape",
    "values",
    "stats",
    "hex256",
    "meta",
    "bytes",
    "producer",
}
SCALAR_TYPES = {"str", "i32", "i64", "f64", "bool"}
RECORD_SOURCES = {"label", "key", "run", "writer", "call", "tensor", "digest", "meta", "frame"}
HEADER_SOURCES = {"constant", "setting", "frame"}
KNOB_TYPES = {"path", "str", "opt_str", "int", "bool", "count_or_all", "enum", "selector", "epoch"}
_INT_MAX = {"i32": 2**31 - 1, "i64": 2**63 - 1}
_ARROW = {
    "str": "string",
    "i32": "int32",
    "i64": "int64",
    "f64": "float64",
    "bool": "bool",
    "dtype": "string",
    "shape": "list<int64>",
    "values": "list<float64>",
    "hex256": "string",
    "meta": "map<string,string>",
    "bytes": "large_binary",
}
# The knob types whose values are numbers, and the largest value each allows by default.
_KNOB_MAX = {"int": 2**31 - 1, "count_or_all": 2**31 - 1}
# Settings that every run has without a knob: the header's config, and which library wrote it.
API_SETTINGS = ("config",)


class SchemaError(ValueError):
    """The schema file is malformed."""


@record(frozen=True)
class Field:
    name: str
    type: str
    doc: str
    nullable: bool = False
    min: int | None = None
    max: int | None = None
    default: Any = None
    arrow: str | None = None
    encodings: tuple[str, ...] = ("jsonl", "msgpack", "parquet")
    example: Any = None
    source: str | None = None  # record fields: RECORD_SOURCES; header fields: HEADER_SOURCES
    positional: bool = False  # key fields the macros and orchlog.log take by position
    run_default: str | None = None  # key fields: the run setting a call that gives none writes
    length: int | None = None  # floats: how many
    precision: str = "f64"  # floats: the precision they are printed and packed in
    text: str = "decimal"  # floats: their JSONL form, a list of numbers or one string of hex bits
    rust_name: str = ""  # key parts: the name of the part in orch_log! and Rust's Keys, where it differs
    parquet: str = ""  # the Parquet column's name (the field's, unless it would shadow a pandas or Polars attribute)

    def in_encoding(self, encoding: str) -> bool:
        return encoding in self.encodings

    @property
    def int_max(self) -> int | None:
        """The largest value an integer field takes (its `max`, else its type's)."""
        return self.max if self.max is not None else _INT_MAX.get(self.type)


@record(frozen=True)
class DType:
    name: str
    size: int
    kind: str  # float | int | uint
    doc: str
    aliases: tuple[str, ...]
    numpy: str  # the NumPy dtype whose bytes are this dtype's bytes (bf16: its bits as <u2)
    parquet: str  # its value in Parquet's dtype column: a spelling np.dtype() reads (bf16 with ml_dtypes)


@record(frozen=True)
class EnvKnob:
    name: str
    type: str
    doc: str
    setting: str = ""
    default: str | None = None
    choices: tuple[str, ...] = ()
    min: int | None = None
    max: int | None = None
    rust_name: str = ""  # the member of Rust's Config, where it differs from `setting`


@record(frozen=True)
class DeveloperVariable:
    name: str
    used_by: str
    doc: str


@record(frozen=True)
class Schema:
    version: int
    library_version: str
    dtypes: tuple[DType, ...]
    record: tuple[Field, ...]
    record_doc: str
    stats: tuple[Field, ...]
    stats_lanes: int
    producer: tuple[Field, ...]
    header: tuple[Field, ...]
    env: tuple[EnvKnob, ...]
    developer_env: tuple[DeveloperVariable, ...]
    selector_numeric: dict[str, str]
    selector_glob: dict[str, str]
    encodings: dict[str, Any]
    warning_prefix: str
    source: Path

    def dtype(self, name: str) -> DType:
        for d in self.dtypes:
            if d.name == name:
                return d
        raise KeyError(name)

    def record_fields(self, encoding: str) -> tuple[Field, ...]:
        return tuple(f for f in self.record if f.in_encoding(encoding))

    @property
    def parquet_columns(self) -> dict[str, str]:
        return parquet_columns(self.record, self.stats)

    def record_field(self, name: str) -> Field:
        for f in self.record:
            if f.name == name:
                return f
        raise KeyError(name)

    def fields_from(self, *sources: str) -> tuple[Field, ...]:
        """The record fields whose values come from any of `sources`, in schema order."""
        return tuple(f for f in self.record if f.source in sources)

    def knob(self, setting: str) -> EnvKnob:
        for k in self.env:
            if k.setting == setting:
                return k
        raise KeyError(setting)

    def env_default(self, name: str) -> str | None:
        for k in self.env:
            if k.name == name:
                return k.default
        raise KeyError(name)


def _require(mapping: object, key: str, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise SchemaError(f"{where}: missing key {key!r}")
    return mapping[key]


def _text(raw: Any) -> str:
    return " ".join(str(raw).split())


def _fields(items: list[Any], where: str, sources: set[str] | None) -> tuple[Field, ...]:
    out = []
    seen = set()
    for i, raw in enumerate(items):
        loc = f"{where}[{i}]"
        name = _require(raw, "name", loc)
        ftype = _require(raw, "type", loc)
        if ftype not in FIELD_TYPES:
            raise SchemaError(f"{loc} ({name}): unknown type {ftype!r}")
        if name in seen:
            raise SchemaError(f"{loc}: duplicate field {name!r}")
        seen.add(name)
        source = raw.get("source")
        if sources is not None and source is not None and source not in sources:
            raise SchemaError(f"{loc} ({name}): unknown source {source!r} (one of {', '.join(sorted(sources))})")
        field = Field(
            name=name,
            type=ftype,
            doc=_text(_require(raw, "doc", loc)),
            nullable=bool(raw.get("nullable", False)),
            min=raw.get("min"),
            max=raw.get("max"),
            default=raw.get("default"),
            arrow=raw.get("arrow", _arrow_type(raw, ftype)),
            encodings=tuple(raw.get("encodings", ("jsonl", "msgpack", "parquet"))),
            example=raw.get("example"),
            source=source,
            positional=bool(raw.get("positional", False)),
            run_default=raw.get("run_default"),
            length=raw.get("length"),
            precision=raw.get("precision", "f64"),
            text=raw.get("text", "decimal"),
            rust_name=raw.get("rust_name", name),
            parquet=raw.get("parquet", name),
        )
        _check_field(field, loc)
        out.append(field)
    return tuple(out)


def _arrow_type(raw: dict[str, Any], ftype: str) -> str | None:
    if ftype == "floats":
        precision = "float32" if raw.get("precision") == "f32" else "float64"
        return f"fixed_size_list<{precision},{raw.get('length')}>"
    return _ARROW.get(ftype)


def _check_field(f: Field, loc: str) -> None:
    where = f"{loc} ({f.name})"
    if f.type == "floats":
        if not isinstance(f.length, int) or f.length < 1:
            raise SchemaError(f"{where}: floats need a positive `length`")
        if f.precision not in ("f32", "f64"):
            raise SchemaError(f"{where}: precision must be f32 or f64")
        if f.nullable:
            raise SchemaError(f"{where}: floats cannot be nullable (write NaN where a value is unknown)")
        if f.text not in ("decimal", "hex"):
            raise SchemaError(f"{where}: text must be decimal or hex")
    elif f.length is not None:
        raise SchemaError(f"{where}: `length` is for floats only")
    elif f.text != "decimal":
        raise SchemaError(f"{where}: `text` is for floats only")
    if f.min is not None and f.type not in _INT_MAX:
        raise SchemaError(f"{where}: `min` is for integers only")


def _record(fields: tuple[Field, ...], settings: set[str]) -> None:
    """The rules that make a record field generable in every language."""
    for f in fields:
        where = f"record field {f.name}"
        if f.source is None:
            raise SchemaError(f"{where}: missing key 'source'")
        if f.source == "key":
            if f.type not in SCALAR_TYPES or f.type == "f64":
                raise SchemaError(f"{where}: a key part is str, bool or an integer, not {f.type}")
            if not f.nullable and f.run_default is None:
                raise SchemaError(f"{where}: a key part must be nullable or have a run_default")
            if f.run_default is not None and f.run_default not in settings:
                raise SchemaError(f"{where}: run_default {f.run_default!r} is not a setting of the env knobs")
        elif f.positional or f.run_default is not None:
            raise SchemaError(f"{where}: positional and run_default are for key parts only")
        if f.source == "run":
            if f.name not in settings:
                raise SchemaError(f"{where}: a run field needs an env knob with setting {f.name!r}")
            if f.nullable:
                raise SchemaError(f"{where}: a run field is never null")
        call_bool = f.type == "bool" and not f.nullable and isinstance(f.default, bool)
        call_text = f.type == "str" and f.nullable and f.default is None
        if f.source == "call" and not (call_bool or call_text):
            raise SchemaError(
                f"{where}: a call field is a bool, not nullable, with a `default`, or a nullable str whose "
                "default is null (what a log call writes)"
            )
        if f.source in ("run", "writer", "label") and f.type not in SCALAR_TYPES:
            raise SchemaError(f"{where}: a {f.source} field is a str, bool or number")
        if f.source == "digest" and f.type not in ("stats", "hex256", "floats"):
            raise SchemaError(f"{where}: a digest is stats, hex256 or floats")
        if "jsonl" in f.encodings and f.type == "bytes":
            raise SchemaError(f"{where}: bytes cannot be written in JSONL")
        _check_frame_field(f, where)
        if f.source == "tensor" and f.name not in ("dtype", "shape", "numel", "values", "data"):
            raise SchemaError(f"{where}: a field computed from the tensor is a digest (source: digest)")
    _frame_fields_last(fields, "record")
    binary = [f.type for f in fields if f.in_encoding("msgpack") and f.source != "frame"]
    if "bytes" in binary and binary.index("bytes") != len(binary) - 1:
        raise SchemaError("record: the tensor bytes are the binary stream's last field but the frame fields")
    keys = [f for f in fields if f.source == "key"]
    positional = [f.positional for f in keys]
    if positional != sorted(positional, reverse=True):
        raise SchemaError("record: the positional key parts must come before every other key part")
    labels = [f for f in fields if f.source == "label"]
    if len(labels) != 1 or fields[0] is not labels[0]:
        raise SchemaError("record: the first field, and only it, is the label (the checkpoint)")


def _check_frame_field(f: Field, where: str) -> None:
    if f.source == "frame" and (f.encodings != ("msgpack",) or f.type not in ("u32", "i32", "i64", "hex256")):
        raise SchemaError(f"{where}: a frame field is an integer or hex256 with `encodings: [msgpack]`")
    if f.type == "u32" and f.source != "frame":
        raise SchemaError(f"{where}: u32 is a frame field's type (a checksum)")


def _frame_fields_last(fields: tuple[Field, ...], where: str) -> None:
    """Frame fields close the frame: each covers every byte before its key, the tensor bytes included."""
    frame = [f.source == "frame" for f in fields if f.in_encoding("msgpack")]
    if frame != sorted(frame):
        raise SchemaError(f"{where}: the frame fields are the binary stream's last fields (after `data`)")


def _knobs(items: list[Any]) -> tuple[EnvKnob, ...]:
    out = []
    for i, k in enumerate(items):
        where = f"env[{i}]"
        knob = EnvKnob(
            name=_require(k, "name", where),
            type=_require(k, "type", where),
            doc=_text(_require(k, "doc", where)),
            setting=_require(k, "setting", where),
            default=k.get("default"),
            choices=tuple(k.get("choices", ())),
            min=k.get("min"),
            max=k.get("max", _KNOB_MAX.get(k.get("type", ""))),
            rust_name=k.get("rust_name", k.get("setting", "")),
        )
        if knob.type not in KNOB_TYPES:
            raise SchemaError(f"env {knob.name}: unknown type {knob.type!r}")
        if knob.type == "enum" and knob.default not in knob.choices:
            raise SchemaError(f"env {knob.name}: the default must be one of the choices")
        if knob.type in ("int", "bool", "count_or_all") and knob.default is None:
            raise SchemaError(f"env {knob.name}: a {knob.type} knob needs a default")
        out.append(knob)
    settings = [k.setting for k in out]
    if len(set(settings)) != len(settings):
        raise SchemaError("env: two knobs share a setting")
    return tuple(out)


def _header(fields: tuple[Field, ...], settings: set[str]) -> tuple[Field, ...]:
    out = []
    for f in fields:
        f = dataclasses.replace(f, source=f.source or "setting")
        if f.source == "setting" and f.name not in settings:
            raise SchemaError(f"header field {f.name}: no setting {f.name!r} (an env knob or config)")
        _check_frame_field(f, f"header field {f.name}")
        out.append(f)
    _frame_fields_last(tuple(out), "header")
    if not out or out[0].name != "orchlog":
        raise SchemaError("header: the first field must be `orchlog` (it marks a header line)")
    return tuple(out)


def parse(data: object, source: Path = SCHEMA_PATH) -> Schema:
    """Validate a parsed YAML mapping and return a Schema."""
    if not isinstance(data, dict):
        raise SchemaError("top level must be a mapping")
    version = _require(data, "schema_version", "schema")
    if not isinstance(version, int) or version < 1:
        raise SchemaError("schema_version must be a positive integer")
    dtypes = tuple(
        DType(
            name=_require(d, "name", f"dtypes[{i}]"),
            size=int(_require(d, "size", f"dtypes[{i}]")),
            kind=_require(d, "kind", f"dtypes[{i}]"),
            doc=_require(d, "doc", f"dtypes[{i}]"),
            aliases=tuple(d.get("aliases", ())),
            numpy=_require(d, "numpy", f"dtypes[{i}]"),
            parquet=_require(d, "parquet", f"dtypes[{i}]"),
        )
        for i, d in enumerate(_require(data, "dtypes", "schema"))
    )
    for d in dtypes:
        if d.kind not in ("float", "int", "uint"):
            raise SchemaError(f"dtype {d.name}: kind must be float, int or uint")
    _unique("dtypes: two share the Parquet spelling", [d.parquet for d in dtypes])
    record = _require(data, "record", "schema")
    stats = _require(data, "stats", "schema")
    header = _require(data, "header", "schema")
    producer = _require(data, "producer", "schema")
    env = _knobs(_require(data, "env", "schema"))
    settings = {k.setting for k in env} | set(API_SETTINGS)
    developer_env = tuple(
        DeveloperVariable(
            name=_require(v, "name", f"developer_env[{i}]"),
            used_by=_require(v, "used_by", f"developer_env[{i}]"),
            doc=_text(_require(v, "doc", f"developer_env[{i}]")),
        )
        for i, v in enumerate(data.get("developer_env", ()))
    )
    for v in developer_env:
        if not v.name.startswith("ORCHLOG_"):
            raise SchemaError(f"developer_env {v.name}: developer variables start with ORCHLOG_")
    for k in env:
        if k.name.startswith("ORCHLOG_"):
            raise SchemaError(f"env {k.name}: ORCHLOG_ is the developer prefix; engine knobs are ORCH_LOG_*")
    record_fields = _fields(_require(record, "fields", "record"), "record.fields", RECORD_SOURCES)
    _record(record_fields, settings)
    stats_fields = _fields(_require(stats, "fields", "stats"), "stats.fields", None)
    _unique("record: two Parquet columns share a name", parquet_columns(record_fields, stats_fields).values())
    header_fields = _header(_fields(_require(header, "fields", "header"), "header.fields", HEADER_SOURCES), settings)
    framed = [[(f.name, f.type) for f in part if f.source == "frame"] for part in (record_fields, header_fields)]
    if framed[0] != framed[1]:
        raise SchemaError("header: its frame fields must be the record's (one checksum rule for every frame)")
    selector = _require(data, "selector", "schema")
    selector_numeric = dict(_require(selector, "numeric_keys", "selector"))
    selector_glob = dict(_require(selector, "glob_keys", "selector"))
    by_name = {f.name: f for f in record_fields}
    for key, field in {**selector_numeric, **selector_glob}.items():
        f = by_name.get(field)
        if f is None or f.source not in ("label", "key"):
            raise SchemaError(f"selector key {key}: {field!r} is not the label or a key part")
        if (key in selector_numeric) != (f.type in _INT_MAX):
            raise SchemaError(f"selector key {key}: numeric keys test integer fields, glob keys text")
    return Schema(
        version=version,
        library_version=str(_require(data, "library_version", "schema")),
        dtypes=dtypes,
        record=record_fields,
        record_doc=_text(_require(record, "doc", "record")),
        stats=stats_fields,
        stats_lanes=int(_require(stats, "lanes", "stats")),
        producer=_fields(_require(producer, "fields", "producer"), "producer.fields", None),
        header=header_fields,
        env=env,
        developer_env=developer_env,
        selector_numeric=selector_numeric,
        selector_glob=selector_glob,
        encodings=dict(_require(data, "encodings", "schema")),
        warning_prefix=str(_require(_require(data, "warnings", "schema"), "prefix", "warnings")),
        source=source,
    )


def parquet_columns(record: tuple[Field, ...], stats: tuple[Field, ...]) -> dict[str, str]:
    """Field name -> Parquet column name for every column of a trace, stats flattened, in column order."""
    columns: dict[str, str] = {}
    for f in record:
        if f.in_encoding("parquet"):
            columns.update({g.name: g.parquet for g in stats} if f.arrow == "flatten" else {f.name: f.parquet})
    return columns


def _unique(message: str, names: Any) -> None:
    names = list(names)
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise SchemaError(f"{message}: {', '.join(doubled)}")


def load(path: Path | str = SCHEMA_PATH) -> Schema:
    """Read and validate a schema file."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SchemaError(f"{path}: not valid YAML: {exc}") from None
    return parse(data, path)


@functools.lru_cache(maxsize=1)
def default() -> Schema:
    """The schema shipped with this checkout."""
    return load(SCHEMA_PATH)
