"""ORCH_LOG_SELECT: which records an emitter writes (and a reader keeps).

Grammar (schema `selector`): comma-separated `key=spec` clauses. Numeric
keys take `N`, `A-B` (inclusive) or `A-` (A and above); glob keys take a
pattern where `*` matches any run of characters and `?` one character
(one Unicode code point). Clauses on one key are OR-ed, different keys
AND-ed; a null field never matches a clause on it.

The rule is ASCII, as in every emitter: digits are `0`-`9` only (a regex
digit class and `int` would also take other scripts' digits) and the
whitespace ignored around keys and specs is space and tab only (`str.strip`
would also take U+00A0, U+3000, the C0 separators ...), so one selector
text means the same thing in C++, Rust and Python.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from orchlog import schema_gen
from orchlog.knob_values import BLANKS
from orchlog.records import record

_NUMBER = re.compile(r"([0-9]+)(?:(-)([0-9]*))?")


class SelectorError(ValueError):
    """The selector text does not follow the grammar."""


@record(frozen=True)
class Range:
    lo: int
    hi: int | None  # None: no upper bound

    def matches(self, value: int) -> bool:
        return value >= self.lo and (self.hi is None or value <= self.hi)


@record(frozen=True)
class Selector:
    text: str
    numeric: Mapping[str, tuple[Range, ...]]  # record field -> ranges
    globs: Mapping[str, tuple[re.Pattern[str], ...]]  # record field -> compiled globs

    def matches(self, record: Mapping[str, Any]) -> bool:
        for field, ranges in self.numeric.items():
            value = record.get(field)
            if value is None or not any(r.matches(value) for r in ranges):
                return False
        for field, patterns in self.globs.items():
            value = record.get(field)
            if value is None or not any(p.fullmatch(value) for p in patterns):
                return False
        return True


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    parts = []
    for ch in pattern:
        if ch == "*":
            parts.append(".*")
        elif ch == "?":
            parts.append(".")
        else:
            parts.append(re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


def parse(text: str | None, schema: Any = schema_gen.TABLES) -> Selector | None:
    """Parse selector text; None or blank means "select everything" (returns None).

    The keys are the schema's (`schema_gen.TABLES`, or a schema codegen loaded)."""
    if text is None or not text.strip(BLANKS):
        return None
    numeric: dict[str, list[Range]] = {}
    globs: dict[str, list[re.Pattern[str]]] = {}
    for raw in text.split(","):
        clause = raw.strip(BLANKS)
        key, eq, spec = clause.partition("=")
        key, spec = key.strip(BLANKS), spec.strip(BLANKS)
        if not eq or not spec:
            raise SelectorError(f"clause {clause!r} is not key=value")
        if key in schema.selector_numeric:
            m = _NUMBER.fullmatch(spec)
            if not m:
                raise SelectorError(f"clause {clause!r}: want N, A-B or A- with non-negative integers")
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            if hi is not None and hi < lo:
                raise SelectorError(f"clause {clause!r}: range end {hi} is below its start {lo}")
            numeric.setdefault(schema.selector_numeric[key], []).append(Range(lo, hi))
        elif key in schema.selector_glob:
            globs.setdefault(schema.selector_glob[key], []).append(glob_to_regex(spec))
        else:
            known = ", ".join([*schema.selector_numeric, *schema.selector_glob])
            raise SelectorError(f"clause {clause!r}: unknown key {key!r} (known: {known})")
    return Selector(
        text=text,
        numeric={k: tuple(v) for k, v in numeric.items()},
        globs={k: tuple(v) for k, v in globs.items()},
    )
