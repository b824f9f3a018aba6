"""Parsing the ORCH_LOG_* env knobs, as every emitter must parse them.

A malformed value never stops the host: the knob falls back to its default
and the caller gets a warning to print once.
"""
from __future__ import annotations

import dataclasses
import re

from orchlog import schema_gen

ALL_VALUES = -1
_DIGITS = re.compile(r"[0-9]+")


@dataclasses.dataclass(frozen=True)
class Parsed:
    value: object
    warning: str | None = None


def _default(name: str) -> str:
    return schema_gen.ENV_DEFAULTS[name]


def parse_values(raw: str | None) -> Parsed:
    """ORCH_LOG_VALUES: a non-negative integer or `all`."""
    default = int(_default(schema_gen.ORCH_LOG_VALUES))
    if raw is None or raw.strip() == "":
        return Parsed(default)
    text = raw.strip()
    if text == "all":
        return Parsed(ALL_VALUES)
    if _DIGITS.fullmatch(text) and int(text) <= 2**31 - 1:
        return Parsed(int(text))
    return Parsed(default, f"ORCH_LOG_VALUES={raw!r} is not a count or 'all'; using {default}")


def parse_mode(raw: str | None) -> Parsed:
    default = _default(schema_gen.ORCH_LOG_MODE)
    if raw is None or raw.strip() == "":
        return Parsed(default)
    if raw.strip() in schema_gen.MODES:
        return Parsed(raw.strip())
    return Parsed(default, f"ORCH_LOG_MODE={raw!r} is not one of {', '.join(schema_gen.MODES)}; using {default}")


def parse_int(name: str, raw: str | None, minimum: int) -> Parsed:
    """ORCH_LOG_RANK (minimum 0) and ORCH_LOG_WORLD_SIZE (minimum 1)."""
    default = int(_default(name))
    if raw is None or raw.strip() == "":
        return Parsed(default)
    text = raw.strip()
    if _DIGITS.fullmatch(text) and minimum <= int(text) <= 2**31 - 1:
        return Parsed(int(text))
    return Parsed(default, f"{name}={raw!r} is not an integer >= {minimum}; using {default}")


def expand_path(template: str, rank: int, pid: int) -> str:
    """Replace `{rank}` and `{pid}`; every other character is kept as is."""
    return template.replace("{rank}", str(rank)).replace("{pid}", str(pid))
