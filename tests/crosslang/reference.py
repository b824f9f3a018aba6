"""What the cross-language tensors must look like on disk, by the reference encoder.

Given tests/crosslang/tensors.json, the env knobs of a run and the producing
language, `expected_files` returns the exact bytes each output file must hold:
the knobs parsed, the selector applied and seq counted the way FORMAT.md says
("Header and env": empty model and commit are null, `select` is the knob's
text as given, key numbers negative or beyond their type are null, a repeated
meta key keeps its later value, text knobs that are not UTF-8 are repaired).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, overload

from orchlog import schema_gen, selector
from orchlog.emit import knobs as knob_parsers
from orchlog.encoding.record import HeaderInput, RecordInput, encode_header, encode_record
from tests.vectors_io import meta_from_json

TENSORS = Path(__file__).with_name("tensors.json")


@overload
def knob_text(value: str | bytes) -> str: ...
@overload
def knob_text(value: None) -> None: ...
def knob_text(value: str | bytes | None) -> str | None:
    """A text knob as an emitter reads it: bytes that are not UTF-8 become U+FFFD per maximal subpart."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def key_part(part: schema_gen.FieldSpec, value: Any) -> Any:
    """A key part as every emitter writes it: a number is null when below its field's least value (`min`, else 0)
    or beyond its type."""
    if part.type in ("i32", "i64"):
        return value if value is not None and (part.min or 0) <= value <= part.int_max else None
    return value


def expected_files(doc: dict[str, Any], knobs: Mapping[str, str | bytes], language: str) -> dict[str, bytes]:
    """{file name relative to ORCH_LOG_FILE's directory: bytes} for one run (a tensor's `grafted` marks its record,
    its `full_reason` a record written whole: every value in JSONL)."""
    environ = {name: knob_text(value) for name, value in knobs.items()}
    settings, _ = knob_parsers.resolve({}, environ)
    chosen = selector.parse(settings["select"])
    header = {name: settings[name] for name in HeaderInput.__dataclass_fields__ if name in settings}
    head_line, head_frame = encode_header(
        HeaderInput(language=language, **header, config=meta_from_json(doc["config"]))
    )
    lines, frames = [head_line], [head_frame]
    for t in doc["tensors"]:
        parts = {f.name: key_part(f, t.get(f.name)) for f in schema_gen.RECORD_FIELDS if f.source == "key"}
        key = {"checkpoint": t["checkpoint"], **knob_parsers.record_identity(parts, settings)}
        if chosen is not None and not chosen.matches(key):
            continue
        encoded = encode_record(
            RecordInput(
                **key,
                dtype=t["dtype"],
                shape=tuple(t["shape"]),
                data=bytes.fromhex(t["data_hex"]),
                seq=len(lines) - 1,
                values=-1 if t.get("full_reason") else settings["values"],
                meta=meta_from_json(dict(t["meta"])),
                grafted=t.get("grafted", False),
                full_reason=t.get("full_reason"),
            )
        )
        lines.append(encoded.jsonl)
        frames.append(encoded.frame)
    name = Path(os.fsdecode(knobs["ORCH_LOG_FILE"])).name
    mode = settings["mode"]
    jsonl, binary = b"".join(lines), b"".join(frames)
    return {
        "summary": {name: jsonl},
        "full": {name: binary},
        "both": {name: jsonl, name + schema_gen.BOTH_MODE_SUFFIX: binary},
    }[mode]
