"""Grading: each pair's tier and whether it is within tolerance, under the rule for its checkpoint.

A pair fails when its graded metric fails the rule's threshold, when its
cosine is below the rule's cos_tol, when its sizes differ, or when one side
has NaN/Inf where the other does not. A pair whose graded metric could not
be measured is `unknown` (never a failure: nothing shows it is out of
tolerance, and the report lists it).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from orchlog.compare.metrics import HASH, PairTable
from orchlog.compare.tolerances import TIERS, UNKNOWN, Rule, Tolerances

TIER_NAMES = TIERS + (UNKNOWN,)
FAIL, UNKNOWN_TIER = TIER_NAMES.index("fail"), TIER_NAMES.index(UNKNOWN)


@dataclasses.dataclass
class Grades:
    tier: np.ndarray  # int8 index into TIER_NAMES
    severity: np.ndarray  # float64: 1.0 at the threshold, above 1 beyond it; ranks pairs across rules
    value: np.ndarray  # the graded metric's value
    rule: np.ndarray  # int index into tolerances.all_rules
    reason: np.ndarray  # object: why a failing pair fails, beyond its metric ("" otherwise)

    @property
    def failed(self) -> np.ndarray:
        failed: np.ndarray = self.tier == FAIL
        return failed


def _grade_rows(rule: Rule, t: PairTable, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    value = t.m[rule.metric][rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        if rule.higher_is_better:
            fails = value < rule.threshold
            badness = 1.0 - value
            room = 1.0 - rule.threshold
            severity = badness / room if room > 0 else np.where(badness > 0, np.inf, 0.0)
        else:
            fails = value >= rule.threshold
            badness = value
            severity = value / rule.threshold if rule.threshold > 0 else np.where(value > 0, np.inf, 0.0)
        tier = np.searchsorted(np.asarray(rule.bounds), badness, side="right").astype(np.int8)
        tier = np.minimum(tier, TIERS.index("warning")).astype(np.int8)
        reason = np.full(len(rows), "", dtype=object)
        if rule.cos_tol is not None:
            cosine = t.m["cosine"][rows]
            low = cosine < rule.cos_tol
            fails |= low
            reason[low] = f"cosine < {rule.cos_tol:g}"
            room = 1.0 - rule.cos_tol
            severity = np.fmax(severity, np.where(low, (1.0 - cosine) / room if room > 0 else np.inf, 0.0))
    for flag, why in (
        (t.numel_mismatch[rows], "sizes differ"),
        (t.window_refused[rows], "shapes differ (compared on their common window; --window allows it)"),
        (t.m["nonfinite_mismatch"][rows] > 0, "NaN/Inf where the other side is finite"),
    ):
        fails |= flag
        reason[flag] = why
        severity = np.where(flag, np.fmax(severity, np.inf), severity)
    unknown = np.isnan(value) & ~fails
    tier = np.where(fails, FAIL, np.where(unknown, UNKNOWN_TIER, tier)).astype(np.int8)
    severity = np.where(unknown, np.nan, severity)
    return tier, severity, value, reason


def grade(t: PairTable, tolerances: Tolerances) -> Grades:
    n = len(t)
    rule_idx = t.a.checkpoint[t.ia].per_row(lambda name: tolerances.index_for(name or ""), dtype=np.int64)
    g = Grades(np.zeros(n, dtype=np.int8), np.zeros(n), np.full(n, np.nan), rule_idx, np.full(n, "", dtype=object))
    for r, rule in enumerate(tolerances.all_rules):
        rows = np.flatnonzero(rule_idx == r)
        if len(rows):
            g.tier[rows], g.severity[rows], g.value[rows], g.reason[rows] = _grade_rows(rule, t, rows)
    settled = t.basis == HASH
    g.tier[settled], g.severity[settled] = 0, 0.0
    return g
