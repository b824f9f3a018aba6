"""What the cross-language tensors must look like on disk, by the reference encoder.

Given tests/crosslang/tensors.json, the env knobs of a run and the producing
language, `expected_files` returns the exact bytes each output file must hold:
the knobs parsed, the selector applied and seq counted the way FORMAT.md says
("Header and env": empty model and commit are null, `select` is the knob's
text as given, key numbers negative or beyond their type are null, a repeated
meta key keeps its later value, text knobs that are not UTF-8 are repaired).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchlog import schema_gen
from orchlog.emit import knobs as knob_parsers
from orchlog.emit import selector
from orchlog.encoding.record import HeaderInput, RecordInput, created_from_epoch, encode_header, encode_record
from tests.vectors_io import meta_from_json

TENSORS = Path(__file__).with_name("tensors.json")


def knob_text(value: str | bytes | None) -> str | None:
    """A text knob as an emitter reads it: bytes that are not UTF-8 become U+FFFD per maximal subpart."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def key_number(value: int | None, bits: int) -> int | None:
    """A key number as every emitter writes it: null when negative or beyond a signed `bits`-bit field."""
    return value if value is not None and 0 <= value < 2 ** (bits - 1) else None


def expected_files(doc: dict[str, Any], knobs: Mapping[str, str | bytes], language: str) -> dict[str, bytes]:
    """{file name relative to ORCH_LOG_FILE's directory: bytes} for one run."""
    values = knob_parsers.parse_values(knobs.get("ORCH_LOG_VALUES")).value
    mode = knob_parsers.parse_mode(knobs.get("ORCH_LOG_MODE")).value
    rank = knob_parsers.parse_int("ORCH_LOG_RANK", knobs.get("ORCH_LOG_RANK"), 0).value
    world_size = knob_parsers.parse_int("ORCH_LOG_WORLD_SIZE", knobs.get("ORCH_LOG_WORLD_SIZE"), 1).value
    team = knob_text(knobs.get("ORCH_LOG_TEAM", ""))
    select_text = knob_text(knobs.get("ORCH_LOG_SELECT"))
    chosen = selector.parse(select_text)
    head_line, head_frame = encode_header(
        HeaderInput(
            language=language,
            created=created_from_epoch(int(knobs["SOURCE_DATE_EPOCH"])),
            team=team,
            model=knob_text(knobs.get("ORCH_LOG_MODEL")) or None,
            git_commit=knob_text(knobs.get("ORCH_LOG_GIT_COMMIT")) or None,
            rank=rank,
            world_size=world_size,
            values=values,
            select=select_text if chosen is not None else None,
            config=meta_from_json(doc["config"]),
        )
    )
    lines, frames = [head_line], [head_frame]
    for t in doc["tensors"]:
        key = {
            "checkpoint": t["checkpoint"],
            "token_idx": key_number(t["token_idx"], 64),
            "layer": key_number(t["layer"], 32),
            "stage": t["stage"],
            "step": key_number(t["step"], 32),
            "rank": rank,
        }
        if chosen is not None and not chosen.matches(key):
            continue
        encoded = encode_record(
            RecordInput(
                checkpoint=t["checkpoint"],
                dtype=t["dtype"],
                shape=tuple(t["shape"]),
                data=bytes.fromhex(t["data_hex"]),
                team=team,
                token_idx=key["token_idx"],
                layer=key["layer"],
                stage=t["stage"],
                step=key["step"],
                rank=rank,
                world_size=world_size,
                seq=len(lines) - 1,
                values=values,
                meta=meta_from_json(dict(t["meta"])),
            )
        )
        lines.append(encoded.jsonl)
        frames.append(encoded.frame)
    name = Path(knobs["ORCH_LOG_FILE"]).name
    jsonl, binary = b"".join(lines), b"".join(frames)
    return {
        "summary": {name: jsonl},
        "full": {name: binary},
        "both": {name: jsonl, name + schema_gen.BOTH_MODE_SUFFIX: binary},
    }[mode]
