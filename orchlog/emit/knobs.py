"""The run's settings: the env knobs parsed as every emitter parses them, and configure()'s arguments checked.

One resolver walks the generated knob table (`schema_gen.KNOBS`: name,
setting, type, default, bounds), reading each knob's text by its type's rule
(orchlog/knob_values.py). A malformed value never stops the host: the knob
falls back to its default and the caller gets a warning to print once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from orchlog import schema_gen
from orchlog.knob_values import (
    ALL_VALUES,
    BLANKS,
    TEXT_TYPES,
    Parsed,
    created_from_epoch,
    default_value,
    expectation,
    knob,
    parse,
)
from orchlog.schema_gen import KnobSpec


def resolve(
    given: Mapping[str, Any], environ: Mapping[str, str], knobs: Iterable[KnobSpec] = schema_gen.KNOBS
) -> tuple[dict[str, Any], list[str]]:
    """Every knob's setting as a run uses it, and the warnings for malformed env values.

    A setting is the argument given (not None), else the env knob parsed. An
    empty opt_str and a selector of spaces and tabs only are None; an epoch
    becomes the header's `created` text, the current time when it is unset.
    """
    settings: dict[str, Any] = {}
    warnings: list[str] = []
    for k in knobs:
        value = given.get(k.setting)
        if value is None:
            parsed = parse(k, environ.get(k.name))
            if parsed.warning:
                warnings.append(parsed.warning)
            value = parsed.value
        if k.type == "opt_str" and value == "":
            value = None
        elif k.type == "selector" and value is not None and not value.strip(BLANKS):
            value = None
        elif k.type == "epoch":
            value = created_from_epoch(value if value is not None else int(time.time()))
        settings[k.setting] = value
    return settings, warnings


def record_identity(key: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """A record's key parts and run fields: each part as given in `key` (a part left None
    takes the run's setting when the schema gives it a run_default), each run field the
    run's setting of its name."""
    out: dict[str, Any] = {}
    for f in schema_gen.RECORD_FIELDS:
        if f.source == "run":
            out[f.name] = settings[f.name]
        elif f.source == "key":
            value = key.get(f.name)
            out[f.name] = settings[f.run_default] if value is None and f.run_default else value
    return out


def check(k: Any, value: Any) -> str | None:
    """Why a value given in code for knob `k`'s setting is not one it takes (None when it is)."""
    if k.type in TEXT_TYPES:
        return None if isinstance(value, str) else "want a string"
    if k.type == "bool":
        return None if isinstance(value, bool) else "want True or False"
    if k.type == "enum":
        return None if value in k.choices else "want one of " + ", ".join(k.choices)
    if k.type == "count_or_all" and value == "all":
        return None
    lo = k.min or 0
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= k.max:
        return {"count_or_all": "want a non-negative count or 'all'", "epoch": f"want seconds up to {k.max}"}.get(
            k.type, f"want an integer >= {lo}"
        )
    return None


def expand_path(template: str, rank: int, pid: int) -> str:
    """Replace `{rank}` and `{pid}`; every other character is kept as is."""
    return template.replace("{rank}", str(rank)).replace("{pid}", str(pid))


# The knob rules are read through this module too (orchlog/knob_values.py holds them).
__all__ = [
    "ALL_VALUES",
    "BLANKS",
    "Parsed",
    "check",
    "created_from_epoch",
    "default_value",
    "expand_path",
    "expectation",
    "knob",
    "parse",
    "record_identity",
    "resolve",
]
