"""Thresholds, the verdict of each pair, and the verdict of the whole guardrail.

A must-match pair passes (PASS_EQUIV) when every bound holds and fails
(FAIL_EQUIV) when one does not; a pair that is allowed to drift is
EXPECTED_DRIFT whatever its numbers (they are still recorded); a pair that
cannot be compared as it stands is PAIRING_ERROR; a pair one of whose sides
never ran is INCOMPLETE, like a pair that is missing altogether. The global
verdict follows from the pairs, from the pairs a config.json declares but
the directory lacks, and from whether there was a config.json at all.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

from orchlog.errors import OrchlogError
from orchlog.guardrail.problems import MISSING_RUN
from orchlog.records import record

PASS_EQUIV, FAIL_EQUIV, EXPECTED_DRIFT, PAIRING_ERROR = "PASS_EQUIV", "FAIL_EQUIV", "EXPECTED_DRIFT", "PAIRING_ERROR"
PASS_GUARDRAIL, FAIL_GUARDRAIL, INCOMPLETE = "PASS_GUARDRAIL", "FAIL_GUARDRAIL", "INCOMPLETE"
PAIR_VERDICTS = (PASS_EQUIV, FAIL_EQUIV, EXPECTED_DRIFT, PAIRING_ERROR, INCOMPLETE)
PASS_GUARDRAIL_LOCAL, EXPECTED_DRIFT_ONLY = "PASS_GUARDRAIL_LOCAL", "EXPECTED_DRIFT_ONLY"
EXIT_CODES = {PASS_GUARDRAIL: 0, PASS_GUARDRAIL_LOCAL: 0, EXPECTED_DRIFT_ONLY: 0, FAIL_GUARDRAIL: 1, INCOMPLETE: 1}
MEANINGS = {
    PASS_GUARDRAIL: "the declared matrix is complete and every must-match pair passes",
    FAIL_GUARDRAIL: "a must-match pair fails its thresholds, or a pair cannot be compared as it stands",
    INCOMPLETE: "declared pairs are missing, or a side of a pair never ran",
    PASS_GUARDRAIL_LOCAL: "every must-match pair present passes; without config.json the matrix was not checked "
    "for completeness, so this is not a full verdict",
    EXPECTED_DRIFT_ONLY: "no must-match pairs: only pairs that are allowed to drift were recorded",
}

# (metric, direction, default bound): "max" means the pair's value must not exceed the bound,
# "min" that it must not fall below it. The first three are the seed's defaults; the others are off unless set.
BOUNDS = (
    ("p99_abs_diff", "max", 1e-3),
    ("max_abs_diff", "max", 5e-3),
    ("top1_agreement", "min", 0.999),
    ("cos_sim_mean", "min", None),
    ("kl_max", "max", None),
)
_DIRECTION = {name: direction for name, direction, _ in BOUNDS}


@record(frozen=True)
class Thresholds:
    p99_abs_diff: float | None = 1e-3
    max_abs_diff: float | None = 5e-3
    top1_agreement: float | None = 0.999
    cos_sim_mean: float | None = None
    kl_max: float | None = None

    def overridden(self, values: dict[str, Any], source: str) -> Thresholds:
        """These thresholds with some replaced; `source` names where the values come from, for errors."""
        unknown = sorted(set(values) - set(_DIRECTION))
        if unknown:
            raise OrchlogError(f"{source}: unknown threshold {unknown[0]!r} (known: {', '.join(_DIRECTION)})")
        for name, value in values.items():
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0
            ):
                raise OrchlogError(f"{source}: threshold {name} must be a non-negative number or null, not {value!r}")
        return dataclasses.replace(self, **{k: None if v is None else float(v) for k, v in values.items()})

    def active(self) -> list[tuple[str, str, float]]:
        """(metric, direction, bound) of every bound that is set."""
        return [
            (name, direction, getattr(self, name)) for name, direction, _ in BOUNDS if getattr(self, name) is not None
        ]

    def to_json(self) -> dict[str, float | None]:
        return {name: getattr(self, name) for name, _, _ in BOUNDS}


@record(frozen=True)
class Breach:
    """A bound a pair does not meet."""

    metric: str
    value: float
    bound: float
    direction: str

    def __str__(self) -> str:
        op = "<=" if self.direction == "max" else ">="
        return f"{self.metric} {self.value:.6g} (must be {op} {self.bound:g})"


def holds(value: float, direction: str, bound: float) -> bool:
    """NaN never holds: a metric that could not be measured is not a pass."""
    return value <= bound if direction == "max" else value >= bound


def breaches(values: dict[str, float], thresholds: Thresholds) -> list[Breach]:
    """The bounds the aggregated metrics `values` break, in the order of BOUNDS."""
    return [
        Breach(name, values[name], bound, direction)
        for name, direction, bound in thresholds.active()
        if not holds(values[name], direction, bound)
    ]


def first_failing_token(tokens: Sequence[Any], broken: Sequence[Breach]) -> tuple[Any, list[Breach]] | None:
    """The first token (in position order) that breaks one of the broken bounds on its own, and what it breaks.

    A token's own value is its max_abs_diff, p99_abs_diff, cos_sim and kl, and 1 or 0 for whether its
    top-1 agrees: a pair whose top-1 agreement is too low first fails at its first disagreeing token.
    """
    for token in tokens:
        found = [
            Breach(b.metric, v, b.bound, b.direction)
            for b in broken
            if not holds(v := token.value_for(b.metric), b.direction, b.bound)
        ]
        if found:
            return token, found
    return None


def pair_verdict(must_match: bool, broken: Sequence[Breach], pairing_errors: Sequence[Any]) -> str:
    if pairing_errors:
        # A side that never ran leaves the pair incomplete; anything else wrong makes it a pairing error.
        return INCOMPLETE if all(e.kind == MISSING_RUN for e in pairing_errors) else PAIRING_ERROR
    if not must_match:
        return EXPECTED_DRIFT
    return FAIL_EQUIV if broken else PASS_EQUIV


def global_verdict(pair_verdicts: Iterable[tuple[bool, str]], missing: int, declared: bool) -> str:
    """From each pair's (must_match, verdict), the declared pairs missing, and whether a config declared the matrix.

    A failure outranks incompleteness: a regression is news even in a partial run.
    """
    pairs = list(pair_verdicts)
    if any(v in (FAIL_EQUIV, PAIRING_ERROR) for _, v in pairs):
        return FAIL_GUARDRAIL
    if missing or any(v == INCOMPLETE for _, v in pairs):
        return INCOMPLETE
    if not any(must for must, _ in pairs):
        return EXPECTED_DRIFT_ONLY
    return PASS_GUARDRAIL if declared else PASS_GUARDRAIL_LOCAL
