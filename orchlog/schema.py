"""Load schema/orchlog.schema.yaml into plain typed objects.

The YAML file is the only source of truth; this module validates its shape
so that a typo there fails loudly in codegen rather than quietly in C++.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "orchlog.schema.yaml"

_FIELD_TYPES = {"str", "i32", "i64", "f64", "dtype", "shape", "values", "stats", "hex256", "meta", "bytes", "producer"}
_ENV_TYPES = {"path", "str", "int", "int_or_all", "enum", "selector"}


class SchemaError(ValueError):
    """The schema file is malformed."""


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    type: str
    doc: str
    nullable: bool = False
    min: int | None = None
    default: Any = None
    arrow: str | None = None
    encodings: tuple[str, ...] = ("jsonl", "msgpack", "parquet")
    example: Any = None

    def in_encoding(self, encoding: str) -> bool:
        return encoding in self.encodings


@dataclasses.dataclass(frozen=True)
class DType:
    name: str
    size: int
    kind: str  # float | int | uint
    doc: str
    aliases: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class EnvKnob:
    name: str
    type: str
    doc: str
    default: str | None = None
    choices: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
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
    selector_numeric: dict[str, str]
    selector_glob: dict[str, str]
    encodings: dict[str, Any]
    source: Path

    def dtype(self, name: str) -> DType:
        for d in self.dtypes:
            if d.name == name:
                return d
        raise KeyError(name)

    def record_fields(self, encoding: str) -> tuple[Field, ...]:
        return tuple(f for f in self.record if f.in_encoding(encoding))

    def env_default(self, name: str) -> str | None:
        for k in self.env:
            if k.name == name:
                return k.default
        raise KeyError(name)


def _require(mapping: dict[str, Any], key: str, where: str) -> Any:
    if key not in mapping:
        raise SchemaError(f"{where}: missing key {key!r}")
    return mapping[key]


def _fields(items: list[dict[str, Any]], where: str) -> tuple[Field, ...]:
    out = []
    seen = set()
    for i, raw in enumerate(items):
        loc = f"{where}[{i}]"
        name = _require(raw, "name", loc)
        ftype = _require(raw, "type", loc)
        if ftype not in _FIELD_TYPES:
            raise SchemaError(f"{loc} ({name}): unknown type {ftype!r}")
        if name in seen:
            raise SchemaError(f"{loc}: duplicate field {name!r}")
        seen.add(name)
        doc = _require(raw, "doc", loc)
        out.append(
            Field(
                name=name,
                type=ftype,
                doc=" ".join(str(doc).split()),
                nullable=bool(raw.get("nullable", False)),
                min=raw.get("min"),
                default=raw.get("default"),
                arrow=raw.get("arrow"),
                encodings=tuple(raw.get("encodings", ("jsonl", "msgpack", "parquet"))),
                example=raw.get("example"),
            )
        )
    return tuple(out)


def parse(data: dict[str, Any], source: Path = SCHEMA_PATH) -> Schema:
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
        )
        for i, d in enumerate(_require(data, "dtypes", "schema"))
    )
    for d in dtypes:
        if d.kind not in ("float", "int", "uint"):
            raise SchemaError(f"dtype {d.name}: kind must be float, int or uint")
    record = _require(data, "record", "schema")
    stats = _require(data, "stats", "schema")
    header = _require(data, "header", "schema")
    producer = _require(data, "producer", "schema")
    env = tuple(
        EnvKnob(
            name=_require(k, "name", f"env[{i}]"),
            type=_require(k, "type", f"env[{i}]"),
            doc=" ".join(str(_require(k, "doc", f"env[{i}]")).split()),
            default=k.get("default"),
            choices=tuple(k.get("choices", ())),
        )
        for i, k in enumerate(_require(data, "env", "schema"))
    )
    for k in env:
        if k.type not in _ENV_TYPES:
            raise SchemaError(f"env {k.name}: unknown type {k.type!r}")
    selector = _require(data, "selector", "schema")
    schema = Schema(
        version=version,
        library_version=str(_require(data, "library_version", "schema")),
        dtypes=dtypes,
        record=_fields(_require(record, "fields", "record"), "record.fields"),
        record_doc=" ".join(str(_require(record, "doc", "record")).split()),
        stats=_fields(_require(stats, "fields", "stats"), "stats.fields"),
        stats_lanes=int(_require(stats, "lanes", "stats")),
        producer=_fields(_require(producer, "fields", "producer"), "producer.fields"),
        header=_fields(_require(header, "fields", "header"), "header.fields"),
        env=env,
        selector_numeric=dict(_require(selector, "numeric_keys", "selector")),
        selector_glob=dict(_require(selector, "glob_keys", "selector")),
        encodings=dict(_require(data, "encodings", "schema")),
        source=source,
    )
    if schema.header[0].name != "orchlog":
        raise SchemaError("header: the first field must be `orchlog` (it marks a header line)")
    return schema


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
