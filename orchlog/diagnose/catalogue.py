"""Run every signature of the catalogue on a case: the findings that fit, most confident first."""

from __future__ import annotations

from orchlog.diagnose.case import Case
from orchlog.diagnose.finding import Finding, ranked
from orchlog.diagnose.signatures import CATALOGUE


def find_signatures(case: Case, kinds: tuple[str, ...] | None = None) -> list[Finding]:
    """Each signature that claims, ranked; an empty list is "no known signature"."""
    found = []
    for kind, test in CATALOGUE.items():
        if kinds is not None and kind not in kinds:
            continue
        finding = test(case)
        if finding is not None:
            found.append(finding)
    return ranked(found)
