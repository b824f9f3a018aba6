"""Run every signature of the catalogue on a case: the findings that fit, most confident first."""

from __future__ import annotations

import math

from orchlog.diagnose.case import Case
from orchlog.diagnose.finding import Finding, ranked
from orchlog.diagnose.signatures import CATALOGUE

# A finding of the key's kind explains away findings of these kinds on the same pair: a RoPE difference
# sits mostly in the fastest-turning pairs of each head, which is its own pattern, not a slice.
SUPERSEDES = {"rotation_within_heads": ("localized",)}


def find_signatures(case: Case, kinds: tuple[str, ...] | None = None) -> list[Finding]:
    """Each signature that claims, ranked; an empty list is "no known signature"."""
    if case.pair.full and case.pair.ref.values.size == 0:
        return []  # whole tensors of no elements: no values to show a pattern (a mean of them is NaN)
    found = []
    for kind, test in CATALOGUE.items():
        if kinds is not None and kind not in kinds:
            continue
        finding = test(case)
        # A confidence that is not a number came of sums that overflowed (values near the float range):
        # that is no claim.
        if finding is not None and math.isfinite(finding.confidence):
            found.append(finding)
    claimed = {f.kind for f in found}
    dropped = {k for kind in claimed for k in SUPERSEDES.get(kind, ())}
    return ranked([f for f in found if f.kind not in dropped])
