"""CompareReport: everything `orchlog compare` found, as a value; JSON with stable keys.

`bool(report)` is True only when every pair is proven within tolerance (and,
with --require-all, every reference record found its partner); `str(report)`
is the verdict in one line (orchlog.report renders the whole report as text,
Markdown or HTML); `to_json()` is the machine-readable form documented in
docs/compare.md ("JSON output"). Keys are only ever added within a report
version; version 2 replaced the tier `unknown` with `undecided`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from orchlog.compare.grading import rerun
from orchlog.compare.grading.coverage import Coverage, Unmatched
from orchlog.compare.grading.divergence import Findings, Tracked
from orchlog.compare.grading.growth import GrowthRow
from orchlog.compare.grading.noise import NoiseSummary
from orchlog.compare.grading.tiers import TIER_NAMES
from orchlog.compare.measuring.metrics import BASES
from orchlog.compare.pairing.tokens import TokenCheck
from orchlog.compare.pairview import PairView
from orchlog.diagnose.diagnosis import Diagnosis, diagnosis_json
from orchlog.numbers import json_number, token_text
from orchlog.read.trace import Diagnostic
from orchlog.records import record
from orchlog.runinfo import RunDifference
from orchlog.tolerances.rules import Rule, Tolerances

REPORT_VERSION = "orchlog-compare/2"
# ok: every pair proven within tolerance; diverged: some pair proven beyond it; undecided: none proven
# beyond, some not proven either way; incomplete: --require-all and reference records went unpaired or
# lines were malformed; no_match: no pair at all; tokens_differ: both traces say which token each
# position holds, and they disagree (the numbers are then not compared as a divergence).
OK, DIVERGED, UNDECIDED, INCOMPLETE, NO_MATCH = "ok", "diverged", "undecided", "incomplete", "no_match"
TOKENS_DIFFER = "tokens_differ"


@record
class InputInfo:
    path: str
    format: str
    records: int
    team: str | None
    producer: str | None


@record
class Malformed:
    side: str
    diagnostic: Diagnostic


@record
class CompareReport:
    status: str
    inputs: tuple[InputInfo, InputInfo]
    key: tuple[str, ...]
    maps: list[str]
    tolerances: Tolerances
    findings: Findings
    diverging_token: int | None  # -1: records that belong to no single token
    decided_by: str | None  # "logits", "last_checkpoint", "noise" or "first_failure"
    first: PairView | None
    growth: list[GrowthRow]
    unmatched: list[Unmatched]
    malformed: list[Malformed]
    track_token: int | None = None
    dumped: list[str] = dataclasses.field(default_factory=list)
    coverage: Coverage | None = None
    first_failure: PairView | None = None  # the earliest failing pair, when the first divergence is undecided
    tokens: TokenCheck = TokenCheck()
    windows: tuple[str, ...] = ()
    maps_by_side: tuple[list[str], list[str]] = ([], [])
    diagnosis: list[Diagnosis] = dataclasses.field(default_factory=list)  # first divergence first (orchlog.diagnose)
    noise: NoiseSummary | None = None  # three-way: what the pairs were graded against
    notes: list[str] = dataclasses.field(default_factory=list)  # what to know before the verdict (a noisy reference)
    runs: list[RunDifference] = dataclasses.field(
        default_factory=list
    )  # how the headers' runs differ (orchlog.runinfo)

    def __bool__(self) -> bool:
        return self.status == OK

    def __str__(self) -> str:
        """The verdict in one line (the text report's last line, orchlog.report for the whole report)."""
        f = self.findings
        if self.status == OK:
            return f"ok, all {f.pairs} pairs proven within tolerance"
        if self.status == NO_MATCH:
            return "no records matched; check --key and --map (exit 1)"
        if self.status == TOKENS_DIFFER and self.tokens.mismatch is not None:
            return f"{self.tokens.mismatch.describe()}: the prompts differ (exit 1)"
        if self.status == INCOMPLETE and self.coverage is not None:
            c, parts = self.coverage, []
            if c.missing:
                first = (
                    f"; first missing: {c.first_missing.name} at {c.first_missing.location}" if c.first_missing else ""
                )
                parts.append(f"{c.missing} reference records unpaired{first}")
            if sum(c.malformed):
                parts.append(f"{sum(c.malformed)} malformed lines or records")
            return f"incomplete (--require-all): {'; '.join(parts)} (exit 1)"
        where = self.first.where() if self.first else "?"
        kind = "fails" if self.first is not None and self.first.failed else "undecided"
        head = f"diverged: {f.failed} pairs fail" if self.status == DIVERGED else "undecided"
        return (
            f"{head}, {f.undecided} undecided; first divergence at {token_text(self.diverging_token)}: {where} ({kind})"
        )

    @property
    def exit_code(self) -> int:
        return 0 if self else 1

    def unmatched_on(self, side: str) -> list[Unmatched]:
        return [u for u in self.unmatched if u.side == side]

    def to_json(self) -> dict[str, Any]:
        f = self.findings
        first = None
        if self.first is not None:
            first = {
                **pair_json(self.first),
                "token_idx": self.first.token_idx,
                "decided_by": self.decided_by,
                "growth": [growth_json(r) for r in self.growth],
                "rerun": rerun_json(self.first) if self.first.undecided else None,
            }
        return {
            "report": REPORT_VERSION,
            "status": self.status,
            "coverage": self.coverage.to_json() if self.coverage is not None else None,
            "warnings": self.coverage.warnings() if self.coverage is not None else [],
            "inputs": {side: dataclasses.asdict(info) for side, info in zip("ab", self.inputs)},
            "key": list(self.key),
            "maps": self.maps,
            "tolerances": {
                "source": self.tolerances.source,
                "rules": [rule_json(r) for r in self.tolerances.all_rules],
                "calibration": self.tolerances.calibration,
            },
            "counts": {
                "pairs": f.pairs,
                "tiers": {name: int(c) for name, c in zip(TIER_NAMES, f.counts)},
                "basis": {name: int(c) for name, c in zip(BASES, f.bases)},
                "undecided": f.undecided,
                "mismatched": dict(f.mismatch_counts),
                "unmatched_a": len(self.unmatched_on("a")),
                "unmatched_b": len(self.unmatched_on("b")),
                "malformed": len(self.malformed),
            },
            "first_divergence": first,
            "first_failure": None if self.first_failure is None else pair_json(self.first_failure),
            "worst": [pair_json(v) for v in f.worst],
            "pairs": [pair_json(v) for v in f.kept_pairs()],
            "pairs_omitted": f.kept_dropped,
            "unmatched": {
                side: [{**u.key, "name": u.name, "location": u.location} for u in self.unmatched_on(side)]
                for side in "ab"
            },
            "malformed": [malformed_json(m) for m in self.malformed],
            "tracked_token": None
            if self.track_token is None
            else {"id": self.track_token, "positions": [dataclasses.asdict(t) for t in f.tracked]},
            "dumped": self.dumped,
            "token_ids": self.tokens.to_json(),
            "windows": list(self.windows),
            "maps_by_side": dict(zip("ab", self.maps_by_side)),
            "noise": None if self.noise is None else self.noise.to_json(),
            "notes": list(self.notes),
            "run_differences": [d.to_json() for d in self.runs],
            **diagnosis_json(self.diagnosis),
        }


def pair_json(v: PairView) -> dict[str, Any]:
    return {
        **v.key(),
        "order": v.order,
        "tier": v.tier,
        "metric": v.metric,
        "value": json_number(v.value),
        "rule": v.rule,
        "reason": v.reason,
        "basis": v.basis,
        "hash": v.hash,
        "metrics": {k: json_number(x) for k, x in v.metrics.items()},
        "names": dict(zip("ab", v.names)),
        "dtypes": dict(zip("ab", v.dtypes)),
        "shapes": {s: None if sh is None else list(sh) for s, sh in zip("ab", v.shapes)},
        "locations": dict(zip("ab", v.locations)),
        "values": {s: [json_number(x) for x in vals] for s, vals in zip("ab", v.values)},
        "mismatches": list(v.mismatches),
        "alignment": None if not v.alignment else v.alignment.to_json(),
        "shard_ranks": v.shard_ranks,
        "interval": [json_number(v.interval[0]), json_number(v.interval[1])],
        "bounds": {m: [json_number(lo), json_number(hi)] for m, (lo, hi) in v.bounds.items()},
        "blake3": dict(zip("ab", v.blake3)),
        "numel": dict(zip("ab", v.numel)),
        "noise": None
        if v.noise_ratio is None
        else {
            "level": json_number(v.noise),
            "ratio": [json_number(v.noise_ratio[0]), json_number(v.noise_ratio[1])],
            "multiple": v.noise_multiple,
            "decided": v.by_noise,
        },
    }


def rerun_json(v: PairView) -> dict[str, dict[str, str]]:
    """For each side, the selector and environment that rerun just this record in full mode."""
    return {
        side: {"select": rerun.selector(keys), "env": env}
        for (side, env), keys in zip(
            rerun.commands(v.own_keys, v.noise_ratio is not None), (*v.own_keys, v.own_keys[0])
        )
    }


def growth_json(r: GrowthRow) -> dict[str, Any]:
    return {
        "label": r.label,
        "layer": r.layer,
        "pairs": r.pairs,
        "failed": r.failed,
        "max_abs": json_number(r.max_abs),
        "min_cosine": json_number(r.min_cosine),
        "worst_tier": r.worst_tier,
        "worst_checkpoint": r.worst_checkpoint,
        "noise_ratio": None if math.isnan(r.noise_ratio) else json_number(r.noise_ratio),
    }


def rule_json(r: Rule) -> dict[str, Any]:
    return {
        "name": r.name,
        "match": list(r.patterns),
        "metric": r.metric,
        "threshold": r.threshold,
        "cos_tol": r.cos_tol,
        "tiers": list(r.bounds),
        "noise_floor": r.noise_floor,
        "stage": r.stage,
        "layers": None if r.layers is None else list(r.layers),
        "growth": r.growth,
    }


def malformed_json(m: Malformed) -> dict[str, Any]:
    loc = m.diagnostic.location
    return {
        "input": m.side,
        "location": str(loc),
        "file": loc.path,
        "line": loc.line,
        "offset": loc.offset,
        "message": m.diagnostic.message,
        "fatal": m.diagnostic.fatal,
    }


__all__ = [
    "CompareReport",
    "InputInfo",
    "Malformed",
    "TokenCheck",
    "Tracked",
    "Unmatched",
    "OK",
    "DIVERGED",
    "UNDECIDED",
    "INCOMPLETE",
    "NO_MATCH",
    "TOKENS_DIFFER",
]
