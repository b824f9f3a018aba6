"""The JSON Schema (draft 2020-12) that external validators check JSONL lines with."""

from __future__ import annotations

import json
from typing import Any

from orchlog.codegen.schema import Field, Schema


def _nullable(schema: dict[str, Any], nullable: bool) -> dict[str, Any]:
    return {"oneOf": [schema, {"type": "null"}]} if nullable else schema


def _field_schema(f: Field, schema: Schema) -> dict[str, Any]:
    if f.type == "str":
        body: dict[str, Any] = {"type": "string"}
    elif f.type in ("i32", "i64"):
        body = {"type": "integer", "maximum": f.int_max}
        if f.min is not None:
            body["minimum"] = f.min
    elif f.type == "bool":
        body = {"type": "boolean"}
    elif f.type == "floats" and f.text == "hex":
        if f.length is None:
            raise ValueError(f"field {f.name}: a floats field written as hex needs a length")
        digits = f.length * (8 if f.precision == "f32" else 16)
        body = {"type": "string", "pattern": f"^[0-9a-f]{{{digits}}}$"}
    elif f.type == "floats":
        body = {"type": "array", "items": {"$ref": "#/$defs/float"}, "minItems": f.length, "maxItems": f.length}
    elif f.type == "f64":
        body = {"$ref": "#/$defs/float"}
    elif f.type == "dtype":
        body = {"enum": [d.name for d in schema.dtypes]}
    elif f.type == "shape":
        body = {"type": "array", "items": {"type": "integer", "minimum": 0}}
    elif f.type == "values":
        body = {"type": "array", "items": {"$ref": "#/$defs/float"}}
    elif f.type == "hex256":
        body = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
    elif f.type in ("meta", "stats", "producer"):
        body = {"$ref": f"#/$defs/{f.type}"}
    else:
        raise ValueError(f"field {f.name}: type {f.type} has no JSON form")
    body = _nullable(body, f.nullable)
    body["description"] = f.doc
    return body


def _object(fields: tuple[Field, ...], schema: Schema, doc: str) -> dict[str, Any]:
    present = [f for f in fields if f.in_encoding("jsonl")]
    return {
        "type": "object",
        "description": doc,
        "properties": {f.name: _field_schema(f, schema) for f in present},
        "required": [f.name for f in present],
        "additionalProperties": False,
    }


def build(schema: Schema, mark: str) -> dict[str, Any]:
    nonfinite = schema.encodings["jsonl"]["nonfinite"]
    header = _object(schema.header, schema, "The run header: the first line of a file.")
    header["properties"]["orchlog"] = {"const": schema.version, "description": schema.header[0].doc}
    return {
        "$comment": mark,
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"orchlog JSONL line, schema v{schema.version}",
        "description": "Each line of an orchlog JSONL file is a header or a record.",
        "oneOf": [{"$ref": "#/$defs/header"}, {"$ref": "#/$defs/record"}],
        "$defs": {
            "float": {
                "description": "A number, or one of the strings that stand for non-finite values.",
                "oneOf": [{"type": "number"}, {"enum": [nonfinite["nan"], nonfinite["pos_inf"], nonfinite["neg_inf"]]}],
            },
            "meta": {
                "type": "object",
                "description": "Map of free-form scalars.",
                "additionalProperties": {"type": ["boolean", "number", "string"]},
            },
            "stats": _object(schema.stats, schema, "Whole-tensor statistics."),
            "producer": _object(schema.producer, schema, "The library that wrote the file."),
            "header": header,
            "record": _object(schema.record, schema, schema.record_doc),
        },
    }


def json_with_mark(doc: dict[str, Any]) -> str:
    """Pretty JSON whose first line carries the generated-file mark (`$comment` first)."""
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    assert text.startswith('{\n "$comment"'), "the mark must be the first key"
    return "{" + text[2:].lstrip() + "\n"


def render(schema: Schema, mark: str) -> str:
    return json_with_mark(build(schema, mark))
