"""Turn vector inputs back into the reference encoder's inputs."""

from __future__ import annotations

import math
from typing import Any

from orchlog import schema_gen
from orchlog.encoding.floats import parse_token
from orchlog.encoding.record import HeaderInput, RecordInput


def meta_from_json(meta: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in meta.items():
        if isinstance(v, dict):
            text = v["f64"]
            out[k] = parse_token(f'"{text}"') if text in ("NaN", "Infinity", "-Infinity") else float(text)
        else:
            out[k] = v
    return out


def record_fields(doc: dict[str, Any]) -> dict[str, Any]:
    """A vector's input as the encoders take it: every field by name, data as bytes, meta floats untagged."""
    fields = {name: doc[name] for name in (*schema_gen.KEY_FIELDS, *schema_gen.CALL_FIELDS) if name in doc}
    fields["checkpoint"] = bytes.fromhex(doc["checkpoint_hex"]) if "checkpoint_hex" in doc else doc["checkpoint"]
    fields.update(
        dtype=doc["dtype"],
        shape=tuple(doc["shape"]),
        data=bytes.fromhex(doc["data_hex"]),
        values=doc["values"],
        meta=meta_from_json(doc["meta"]),
    )
    return fields


def record_input(doc: dict[str, Any]) -> RecordInput:
    return RecordInput(**record_fields(doc))


def header_input(doc: dict[str, Any]) -> HeaderInput:
    fields = dict(doc)
    fields["config"] = meta_from_json(doc["config"])
    return HeaderInput(**fields)


def is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)
