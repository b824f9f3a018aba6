"""Turn vector inputs back into the reference encoder's inputs."""

from __future__ import annotations

import math
from typing import Any

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


def record_input(doc: dict[str, Any]) -> RecordInput:
    checkpoint = bytes.fromhex(doc["checkpoint_hex"]) if "checkpoint_hex" in doc else doc["checkpoint"]
    return RecordInput(
        checkpoint=checkpoint,
        dtype=doc["dtype"],
        shape=tuple(doc["shape"]),
        data=bytes.fromhex(doc["data_hex"]),
        team=doc["team"],
        token_idx=doc["token_idx"],
        layer=doc["layer"],
        stage=doc["stage"],
        step=doc["step"],
        rank=doc["rank"],
        world_size=doc["world_size"],
        seq=doc["seq"],
        values=doc["values"],
        meta=meta_from_json(doc["meta"]),
    )


def header_input(doc: dict[str, Any]) -> HeaderInput:
    fields = dict(doc)
    fields["config"] = meta_from_json(doc["config"])
    return HeaderInput(**fields)


def is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)
