"""A Diagnosis: for one diverging pair, the signatures that fit, where the error entered and how it grew."""

from __future__ import annotations

import dataclasses
from typing import Any

from orchlog.diagnose.case import Where
from orchlog.diagnose.finding import Finding
from orchlog.diagnose.layer_growth import LayerGrowth
from orchlog.diagnose.locality import Locality
from orchlog.numbers import json_rounded
from orchlog.records import record

NO_SIGNATURE = "no known signature: the difference matches none of the catalogue's patterns"


@record
class Diagnosis:
    where: Where
    role: str  # "first_divergence" or "worst"
    basis: str  # "tensors", "summary" or "none" (not diagnosed)
    findings: list[Finding] = dataclasses.field(default_factory=list)
    locality: Locality | None = None
    growth: LayerGrowth | None = None
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def ran(self) -> bool:
        return self.basis != "none"

    def headline(self) -> str:
        if not self.ran:
            return "not diagnosed: " + "; ".join(self.notes)
        if not self.findings:
            return NO_SIGNATURE
        top = self.findings[0]
        return f"{top.kind} ({top.confidence:.2f}): {top.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "where": self.where.to_json(),
            "role": self.role,
            "basis": self.basis,
            "no_known_signature": self.ran and not self.findings,
            "diagnosis": [f.to_json() for f in self.findings],
            "locality": None if self.locality is None else _numbers(self.locality.to_json()),
            "layer_growth": None if self.growth is None else _numbers(self.growth.to_json()),
            "notes": list(self.notes),
        }


def _numbers(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _numbers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_numbers(v) for v in obj]
    return json_rounded(obj)


def diagnosis_json(diagnoses: list[Diagnosis]) -> dict[str, Any]:
    """The compare report's JSON keys: `diagnosis`, the first divergence's findings (kind, confidence,
    evidence, message; empty for "no known signature"), and `diagnoses`, everything about each pair diagnosed."""
    first = next((d for d in diagnoses if d.role == "first_divergence"), None)
    return {
        "diagnosis": [] if first is None else [f.to_json() for f in first.findings],
        "diagnoses": [d.to_json() for d in diagnoses],
    }
