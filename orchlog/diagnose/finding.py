"""What the diagnosis says: findings (one per signature that fits), and the whole diagnosis as a value.

A Finding's `kind` is one of the stable names in `KINDS` (documented in
docs/diagnose.md); `confidence` is in [0, 1] and follows the rule the
signature's docstring states; `evidence` holds numbers (and short labels) a
reader can check; `message` says in plain words what it likely means.
"""

from __future__ import annotations

from typing import Any

from orchlog.numbers import json_rounded
from orchlog.records import record

# The catalogue's kind names, in the order signatures are tried. Names are only ever added.
KINDS = (
    "nonfinite_origin",
    "equals_other_checkpoint",
    "transpose",
    "permutation",
    "offset",
    "scale",
    "per_token_scale",
    "per_channel_scale",
    "softmax_temperature",
    "rotation_within_heads",
    "support_change",
    "localized",
    "precision",
)

# Confidence is multiplied by this when the evidence is a summary (leading values and stats) rather than
# whole tensors: the same fit over 10 values of 4096 says less.
THIN = 0.6


@record(frozen=True)
class Finding:
    kind: str
    confidence: float
    evidence: dict[str, Any]
    message: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown signature kind {self.kind!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "confidence": round(float(self.confidence), 4),
            "evidence": {k: json_rounded(v) for k, v in self.evidence.items()},
            "message": self.message,
        }


def ranked(findings: list[Finding]) -> list[Finding]:
    """Most confident first; ties keep the catalogue's order."""
    return sorted(findings, key=lambda f: (-f.confidence, KINDS.index(f.kind)))
