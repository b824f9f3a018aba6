"""The text of an env knob read as its value: the rule of each knob type, as every emitter reads it.

Written once here for Python, as once in the C++ core (orchlog/detail/logger/env.hpp) and in the Rust crate
(src/config.rs); all three are held to schema/vectors/env.json. A low module: the writer's knobs
(orchlog/emit/knobs.py), the reference encoder's defaults and the reader's selectors use it alike.

The parsers are ASCII: a number is `0`-`9` digits only (no sign, no other script's digits) and the only
whitespace ignored around a number or a choice is space and tab (schema/FORMAT.md, "Header and env"); text
knobs are taken as given. A malformed value gives its default and a warning to print once.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable
from typing import Any

from orchlog import schema_gen
from orchlog.records import record
from orchlog.schema_gen import KnobSpec

ALL_VALUES = -1
BLANKS = " \t"  # the whitespace ignored around knob values and selector parts; str.strip() would take more
_DIGITS = re.compile(r"[0-9]+")
TEXT_TYPES = ("path", "str", "opt_str", "selector")  # knob types whose text is their value
_INVALID = object()


@record(frozen=True)
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
    return k.default if k.type in TEXT_TYPES else _parse_text(k, k.default)


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
    if k.type in TEXT_TYPES:
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


def created_from_epoch(seconds: int) -> str:
    """RFC 3339 UTC with seconds, as the header's `created` field wants it (the epoch knob's text)."""
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
