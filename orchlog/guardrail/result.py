"""What a guardrail found, as values: each pair's verdict and numbers, and the verdict of the whole matrix.

`bool(result)` is True when the guardrail lets CI go on (exit 0);
`str(result)` is the verdict in one line (orchlog.report renders the rest); `to_json()` is summary.json (key
`verdict` holds the global verdict; keys are only ever added).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from orchlog.guardrail.config import Matrix, natural
from orchlog.guardrail.layout import Run
from orchlog.guardrail.metrics import TokenMetrics, aggregate
from orchlog.guardrail.problems import PairingError
from orchlog.guardrail.verdicts import (
    EXIT_CODES,
    FAIL_EQUIV,
    MEANINGS,
    PAIR_VERDICTS,
    PAIRING_ERROR,
    Breach,
    first_failing_token,
)
from orchlog.numbers import json_number
from orchlog.records import record

SUMMARY_VERSION = "orchlog-guardrail/1"
# The per-pair metrics files' name and version ("report" key; schema/json/guardrail-pair.schema.json).
PAIR_VERSION = "orchlog-guardrail-pair/1"


@record(frozen=True)
class SideInfo:
    name: str
    logits: str | None  # the file read, None when there was none
    format: str | None
    metadata: dict[str, Any] | None


@record
class PairResult:
    run: Run
    declared: bool  # False: present in the directory but not in config.json's matrix
    must_match: bool
    verdict: str
    tokens: list[TokenMetrics]
    breaches: list[Breach]
    pairing_errors: list[PairingError]
    sides: tuple[SideInfo, SideInfo]
    metrics_file: str

    @property
    def label(self) -> str:
        return self.run.label()

    @property
    def failed(self) -> bool:
        return self.verdict in (FAIL_EQUIV, PAIRING_ERROR)

    @property
    def aggregates(self) -> dict[str, float]:
        return aggregate(self.tokens)

    def first_failing_token(self) -> tuple[TokenMetrics, list[Breach]] | None:
        """Where a failing must-match pair first breaks a bound its aggregates break."""
        if self.verdict != FAIL_EQUIV:
            return None
        return first_failing_token(self.tokens, self.breaches)

    def first_fail(self) -> dict[str, Any] | None:
        """Where a failing pair first fails and why: its first position breaking a bound, or for a pairing error
        the first position the errors name (None when they name none, as for a missing file)."""
        if self.verdict == FAIL_EQUIV:
            found = self.first_failing_token()
            token, why = found if found is not None else (None, self.breaches)
            at, token_id = (None, None) if token is None else (token.token_idx, token.token_id)
            reasons = [str(b) for b in why]
        elif self.verdict == PAIRING_ERROR:
            positions = sorted(p for e in self.pairing_errors for p in e.positions)
            at, token_id = (positions[0] if positions else None), None
            reasons = [str(e) for e in self.pairing_errors]
        else:
            return None
        return {
            "pair": self.label,
            "axes": self.axes_json(),
            "verdict": self.verdict,
            "token_idx": at,
            "token_id": token_id,
            "reasons": reasons,
        }

    def axes_json(self) -> dict[str, int | str]:
        return {axis: natural(v) for axis, v in self.run.values.items()}

    def to_json(self, per_token: bool = False) -> dict[str, Any]:
        out = {
            "pair": self.label,
            "axes": self.axes_json(),
            "run_dir": self.run.path,
            "declared": self.declared,
            "must_match": self.must_match,
            "verdict": self.verdict,
            "tokens": len(self.tokens),
            "metrics": {k: json_number(v) for k, v in self.aggregates.items()},
            "failed_thresholds": [dataclasses.asdict(b) | {"value": json_number(b.value)} for b in self.breaches],
            "first_fail": self.first_fail(),
            "pairing_errors": [pairing_error_json(e) for e in self.pairing_errors],
            "sides": [dataclasses.asdict(s) for s in self.sides],
            "metrics_file": self.metrics_file,
        }
        if per_token:
            out["per_token"] = [t.to_json() for t in self.tokens]
        return out


def pairing_error_json(e: PairingError) -> dict[str, Any]:
    return {"kind": e.kind, "message": e.message, "positions": list(e.positions)}


@record
class GuardrailResult:
    verdict: str
    directory: str
    matrix: Matrix
    pairs: list[PairResult]  # in matrix order
    missing: list[Run]  # declared in config.json, absent from the directory
    ignored: list[str]  # directories at an axis level that do not fit the run pattern

    def __bool__(self) -> bool:
        return self.exit_code == 0

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def meaning(self) -> str:
        return MEANINGS[self.verdict]

    @property
    def first_fail(self) -> PairResult | None:
        return next((p for p in self.pairs if p.failed), None)

    def counts(self) -> dict[str, int]:
        return {
            "pairs": len(self.pairs),
            **{v: sum(p.verdict == v for p in self.pairs) for v in PAIR_VERDICTS},
            "missing": len(self.missing),
            "undeclared": sum(not p.declared for p in self.pairs),
        }

    def __str__(self) -> str:
        """The verdict in one line; orchlog.report renders the whole report as text, Markdown or HTML."""
        return f"{self.verdict} ({self.meaning})"

    def to_json(self) -> dict[str, Any]:
        first = self.first_fail
        return {
            "report": SUMMARY_VERSION,
            "verdict": self.verdict,
            "meaning": self.meaning,
            "full_verdict": self.matrix.declared is not None,
            "directory": self.directory,
            "matrix": self.matrix.to_json(),
            "thresholds": self.matrix.thresholds.to_json(),
            "counts": self.counts(),
            "pairs": [p.to_json() for p in self.pairs],
            "pairing_errors": [
                {"pair": p.label, **pairing_error_json(e)} for p in self.pairs for e in p.pairing_errors
            ],
            "missing_pairs": [
                {"pair": r.label(), "axes": {a: natural(v) for a, v in r.values.items()}, "run_dir": r.path}
                for r in self.missing
            ],
            "ignored": self.ignored,
            "first_fail": None if first is None else first.first_fail(),
        }
