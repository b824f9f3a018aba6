"""The run's settings: the env knobs parsed as every emitter parses them, and configure()'s arguments checked.

One resolver walks the generated knob table (`schema_gen.KNOBS`: name,
setting, type, default, bounds); what a type means is written once here, as
it is once in the C++ core (orchlog/detail/logger/env.hpp) and in the Rust
crate (src/config.rs), and all three are held to schema/vectors/env.json.

A malformed value never stops the host: the knob falls back to its default
and the caller gets a warning to print once. Like every emitter, the parsers
are ASCII: a number is `0`-`9` digits only (no sign, no other script's
digits) and the only whitespace ignored around a number or a choice is space
and tab (schema/FORMAT.md, "Header and env"); text knobs are taken as given.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from orchlog import schema_gen
from orchlog.schema_gen import KnobSpec

ALL_VALUES = -1
BLANKS = " \t"  # the whitespace ignored around knob values and selector parts; str.strip() would take more
_DIGITS = re.compile(r"[0-9]+")
_TEXT = ("path", "str", "opt_str", "selector")
_INVALID = object()


@dataclasses.dataclass(frozen=True)
class Parsed:
    value: Any
    warning: str | None = None


def knob(setting: str, knobs: Iterable[KnobSpec] = schema_gen.KNOBS) -> KnobSpec:
    """The knob of a setting, e.g. knob("rank") is ORCH_LOG_RANK."""
    for k in knobs:
        if k.setting == setting:
            return k
    raise KeyError(setting)


def _number(k: Any, text: str) -> int | None:
    if not _DIGITS.fullmatch(text):
        return None
    value = int(text)
    return value if (k.min or 0) <= value <= k.max else None


def _parse_text(k: Any, text: str) -> Any:
    """A knob value other than text, or _INVALID."""
    value: Any
    if k.type == "count_or_all":
        value = ALL_VALUES if text == "all" else _number(k, text)
    elif k.type in ("int", "epoch"):
        value = _number(k, text)
    elif k.type == "bool":
        value = {"0": False, "1": True}.get(text)
    elif k.type == "enum":
        value = text if text in k.choices else None
    else:
        raise AssertionError(f"knob type {k.type} has no parser")
    return _INVALID if value is None else value


def default_value(k: Any) -> Any:
    """What a knob stands for when it is unset: its default, parsed (None when it has none)."""
    if k.default is None:
        return None
    return k.default if k.type in _TEXT else _parse_text(k, k.default)


def expectation(k: Any) -> str:
    """What a malformed value of the knob is not."""
    return {
        "int": f"an integer >= {k.min or 0}",
        "count_or_all": "a count or 'all'",
        "enum": "one of " + ", ".join(k.choices),
        "bool": "0 or 1",
        "epoch": f"a number of seconds up to {k.max}",
    }[k.type]


def parse(k: Any, raw: str | None) -> Parsed:
    """The value of knob `k` given its raw text (None: unset), with a warning when it was malformed."""
    if k.type in _TEXT:
        if raw is None:
            return Parsed(default_value(k))
        return Parsed(None if k.type == "opt_str" and raw == "" else raw)
    text = (raw or "").strip(BLANKS)
    if not text:
        return Parsed(default_value(k))
    value = _parse_text(k, text)
    if value is not _INVALID:
        return Parsed(value)
    fallback = "the current time" if k.type == "epoch" else k.default
    return Parsed(default_value(k), f"{k.name}='{raw}' is not {expectation(k)}; using {fallback}")


def resolve(
    given: Mapping[str, Any], environ: Mapping[str, str], knobs: Iterable[KnobSpec] = schema_gen.KNOBS
) -> tuple[dict[str, Any], list[str]]:
    """Every knob's setting as a run uses it, and the warnings for malformed env values.

    A setting is the argument given (not None), else the env knob parsed. An
    empty opt_str and a selector of spaces and tabs only are None; an epoch
    becomes the header's `created` text, the current time when it is unset.
    """
    from orchlog.encoding.record import created_from_epoch

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
    if k.type in _TEXT:
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
