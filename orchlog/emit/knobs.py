"""Parsing the ORCH_LOG_* env knobs, as every emitter must parse them.

A malformed value never stops the host: the knob falls back to its default
and the caller gets a warning to print once.

Like every emitter, these parsers are ASCII: a number is `0`-`9` digits only
(no sign, no other script's digits) and the only whitespace ignored around
a value is space and tab (schema/FORMAT.md, "Header and env").
"""

from __future__ import annotations

import dataclasses
import re

from orchlog import schema_gen

ALL_VALUES = -1
BLANKS = " \t"  # the whitespace ignored around knob values and selector parts; str.strip() would take more
_DIGITS = re.compile(r"[0-9]+")
# SOURCE_DATE_EPOCH up to 9999-12-31T23:59:59Z: `created` has a four-digit year.
MAX_SOURCE_DATE_EPOCH = 253402300799


@dataclasses.dataclass(frozen=True)
class Parsed:
    value: object
    warning: str | None = None


def _default(name: str) -> str:
    return schema_gen.ENV_DEFAULTS[name]


def parse_values(raw: str | None) -> Parsed:
    """ORCH_LOG_VALUES: a non-negative integer or `all`."""
    default = int(_default(schema_gen.ORCH_LOG_VALUES))
    text = (raw or "").strip(BLANKS)
    if not text:
        return Parsed(default)
    if text == "all":
        return Parsed(ALL_VALUES)
    if _DIGITS.fullmatch(text) and int(text) <= 2**31 - 1:
        return Parsed(int(text))
    return Parsed(default, f"ORCH_LOG_VALUES={raw!r} is not a count or 'all'; using {default}")


def parse_mode(raw: str | None) -> Parsed:
    default = _default(schema_gen.ORCH_LOG_MODE)
    text = (raw or "").strip(BLANKS)
    if not text:
        return Parsed(default)
    if text in schema_gen.MODES:
        return Parsed(text)
    return Parsed(default, f"ORCH_LOG_MODE={raw!r} is not one of {', '.join(schema_gen.MODES)}; using {default}")


def parse_int(name: str, raw: str | None, minimum: int) -> Parsed:
    """ORCH_LOG_RANK (minimum 0) and ORCH_LOG_WORLD_SIZE (minimum 1)."""
    default = int(_default(name))
    text = (raw or "").strip(BLANKS)
    if not text:
        return Parsed(default)
    if _DIGITS.fullmatch(text) and minimum <= int(text) <= 2**31 - 1:
        return Parsed(int(text))
    return Parsed(default, f"{name}={raw!r} is not an integer >= {minimum}; using {default}")


def parse_source_date_epoch(raw: str | None) -> Parsed:
    """SOURCE_DATE_EPOCH: seconds since 1970 for the header's `created`; None means the current time."""
    text = (raw or "").strip(BLANKS)
    if not text:
        return Parsed(None)
    if _DIGITS.fullmatch(text) and int(text) <= MAX_SOURCE_DATE_EPOCH:
        return Parsed(int(text))
    return Parsed(
        None,
        f"SOURCE_DATE_EPOCH={raw!r} is not a number of seconds up to {MAX_SOURCE_DATE_EPOCH}; using the current time",
    )


def expand_path(template: str, rank: int, pid: int) -> str:
    """Replace `{rank}` and `{pid}`; every other character is kept as is."""
    return template.replace("{rank}", str(rank)).replace("{pid}", str(pid))
