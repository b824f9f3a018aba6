"""Coverage: how much of the reference the comparison saw, as part of the verdict.

A trace cut short, a checkpoint one engine forgot to log, or lines a reader
had to skip leave reference records without a partner. They are counted,
never dropped silently: every report states the coverage first and warns
when reference records went unpaired; with `--require-all` that, or any
malformed line, fails the comparison (exit 1), naming the first reference
record left without a partner. `--allow-missing GLOB` (repeatable) excuses
reference records whose checkpoint name (as written, or as mapped) matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchlog.records import record
from orchlog.strings import glob_matcher


@record
class Unmatched:
    """A record that found no partner on the other side."""

    side: str
    key: dict[str, Any]
    name: str  # the checkpoint name as that side wrote it
    location: str


@record(frozen=True)
class Coverage:
    pairs: int
    only_in_reference: int
    only_in_ours: int
    malformed: tuple[int, int]  # lines or records each side's reader had to skip
    required: bool = False  # --require-all
    allowed: int = 0  # reference records without a partner that --allow-missing excuses
    allow_patterns: tuple[str, ...] = ()
    first_missing: Unmatched | None = None  # the first reference record without a partner, not excused

    @property
    def missing(self) -> int:
        """Reference records without a partner that nothing excuses."""
        return self.only_in_reference - self.allowed

    @property
    def complete(self) -> bool:
        return self.missing == 0 and sum(self.malformed) == 0

    @property
    def failed(self) -> bool:
        return self.required and not self.complete

    def line(self) -> str:
        allowed = f" ({self.allowed} allowed by --allow-missing)" if self.allowed else ""
        return (
            f"{self.pairs} pairs; {self.only_in_reference} only in reference{allowed}; "
            f"{self.only_in_ours} only in ours; {sum(self.malformed)} malformed"
        )

    def warnings(self) -> list[str]:
        """What a reader of the verdict must not miss; every report format shows these lines."""
        out = []
        if self.missing:
            first = self.first_missing
            where = f"; the first: {_describe(first)}" if first is not None else ""
            verdict = "so the comparison fails (--require-all)" if self.required else "pass --require-all to fail on it"
            out.append(f"{self.missing} reference records have no partner in ours{where}; {verdict}")
        if sum(self.malformed):
            a, b = self.malformed
            verdict = "so the comparison fails (--require-all)" if self.required else "they were skipped"
            out.append(f"{a + b} malformed lines or records ({a} in reference, {b} in ours); {verdict}")
        return out

    def to_json(self) -> dict[str, Any]:
        first = self.first_missing
        return {
            "pairs": self.pairs,
            "only_in_reference": self.only_in_reference,
            "only_in_ours": self.only_in_ours,
            "malformed": sum(self.malformed),
            "malformed_reference": self.malformed[0],
            "malformed_ours": self.malformed[1],
            "allowed_missing": self.allowed,
            "allow_missing": list(self.allow_patterns),
            "require_all": self.required,
            "complete": self.complete,
            "first_missing": None if first is None else {**first.key, "name": first.name, "location": first.location},
        }


def _describe(u: Any) -> str:
    keys = ", ".join(f"{k}={v}" for k, v in u.key.items() if v is not None and k != "checkpoint")
    return f"{u.name}{' (' + keys + ')' if keys else ''} at {u.location}"


def coverage(
    pairs: int,
    only_in_reference: Sequence[Any],
    only_in_ours: int,
    malformed: tuple[int, int],
    require_all: bool = False,
    allow_missing: Sequence[str] = (),
) -> Coverage:
    """`only_in_reference`: the reference's unpaired records (Unmatched), in the reference's order."""
    excused = glob_matcher(tuple(allow_missing))
    allowed = [excused(u.name) or excused(u.key.get("checkpoint")) for u in only_in_reference]
    return Coverage(
        pairs=pairs,
        only_in_reference=len(only_in_reference),
        only_in_ours=only_in_ours,
        malformed=malformed,
        required=require_all,
        allowed=sum(allowed),
        allow_patterns=tuple(allow_missing),
        first_missing=next((u for u, ok in zip(only_in_reference, allowed) if not ok), None),
    )
