"""Per-token logits parity: one line per position, and the first position whose cosine drops below a bound.

    orchlog compare --per-token ref_logits.jsonl.gz ours_logits.jsonl.gz --cos-tol 0.999

Only the logits records of each trace take part (checkpoints matching the
logits globs); they align on token_idx by default. Each position gets the
logits metrics of orchlog.compare.measuring.logits. Positions where a side carries
only leading values are measured on those and marked partial: the cosine of
some values proves nothing about the cosine of all of them, so such a
position is undecided (never ok), unless both traces are legacy checkpoint
JSONL, whose spec grades the values both sides carry.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from orchlog.compare.measuring.logits import LogitsDiff, logits_diff
from orchlog.compare.options import CompareOptions
from orchlog.compare.pairing.tensors import flat_tensor
from orchlog.compare.pairing.tokens import TokenCheck
from orchlog.compare.plan import WalkPlan
from orchlog.compare.result import DIVERGED, NO_MATCH, OK, TOKENS_DIFFER, UNDECIDED
from orchlog.errors import OrchlogError
from orchlog.numbers import json_number
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.trace import Diagnostic, Trace
from orchlog.records import record
from orchlog.tolerances.rules import load_tolerances

DEFAULT_COS_TOL = 0.999

# The JSON form's name and version ("report" key; schema/json/compare-per-token.schema.json).
PER_TOKEN_VERSION = "orchlog-compare-per-token/1"


@record(frozen=True)
class Position:
    token_idx: int | None
    diff: LogitsDiff
    partial: bool  # measured on leading values, not whole logits
    locations: tuple[str, str]
    # Logits on each side (-1: unknown); when they differ the common prefix is measured.
    sizes: tuple[int, int] = (-1, -1)
    leading_rule: bool = False  # partial positions are graded on their leading values (legacy checkpoint JSONL)

    @property
    def size_mismatch(self) -> bool:
        return min(self.sizes) >= 0 and self.sizes[0] != self.sizes[1]

    def verdict(self, cos_tol: float) -> str:
        """fail: below the cosine bound (NaN included) on whole logits, or logits of different lengths (compare
        fails those too); undecided: measured on leading values only; else ok."""
        if self.size_mismatch:
            return "fail"
        if self.partial and not self.leading_rule:
            return "undecided"
        return "ok" if self.diff.cosine >= cos_tol else "fail"

    def diverges(self, cos_tol: float) -> bool:
        """Not proven within the bound: failing or undecided."""
        return self.verdict(cos_tol) != "ok"


@record
class PerTokenReport:
    positions: list[Position]
    cos_tol: float
    paths: tuple[str, str]
    unmatched: tuple[int, int]
    malformed: list[tuple[str, Diagnostic]]
    track_token: int | None = None
    tokens: TokenCheck = TokenCheck()

    @property
    def first_divergence(self) -> Position | None:
        if self.tokens.mismatch is not None:
            return None
        return next((p for p in self.positions if p.diverges(self.cos_tol)), None)

    @property
    def status(self) -> str:
        if self.tokens.mismatch is not None:
            return TOKENS_DIFFER
        if not self.positions:
            return NO_MATCH
        verdicts = {p.verdict(self.cos_tol) for p in self.positions}
        return DIVERGED if "fail" in verdicts else UNDECIDED if "undecided" in verdicts else OK

    def __bool__(self) -> bool:
        return self.status == OK

    @property
    def exit_code(self) -> int:
        return 0 if self else 1

    @property
    def max_absolute_diff(self) -> float:
        values = [p.diff.max_abs for p in self.positions if not math.isnan(p.diff.max_abs)]
        return max(values) if values else math.nan

    def __str__(self) -> str:
        """The verdict in one line; orchlog.report renders the whole report as text or Markdown."""
        first = self.first_divergence
        if self.tokens.mismatch is not None:
            return (
                f"{self.tokens.mismatch.describe()}: the prompts differ "
                "(a leading token more on one side lines up with --token-offset N)"
            )
        if self.status == NO_MATCH:
            return "no logits positions matched (check --key and --logits)"
        if first is None:
            return (
                f"ok, all {len(self.positions)} positions have cosine >= {self.cos_tol:g} and logits of the same length"
            )
        if self.status == UNDECIDED:
            return (
                f"undecided: first divergence at token {first.token_idx} (undecided): measured on leading "
                "values only, which prove no cosine; log whole logits (ORCH_LOG_VALUES=all) to decide"
            )
        kind = first.verdict(self.cos_tol)
        return f"diverged: first divergence at token {first.token_idx} ({'fails' if kind == 'fail' else kind})"

    def to_json(self) -> dict[str, Any]:
        first = self.first_divergence
        d = [p.diff for p in self.positions]
        out: dict[str, Any] = {
            "report": PER_TOKEN_VERSION,
            "status": self.status,
            "first_divergence_token": None if first is None else first.token_idx,
            "per_token_cosine_sim": [json_number(x.cosine) for x in d],
            "per_token_l2_dist": [json_number(x.l2) for x in d],
            "max_absolute_diff": json_number(self.max_absolute_diff),
            "threshold": self.cos_tol,
            "token_idx": [p.token_idx for p in self.positions],
            "per_token_max_abs": [json_number(x.max_abs) for x in d],
            "per_token_p99_abs": [json_number(x.p99_abs) for x in d],
            "per_token_top1_match": [x.top1_match for x in d],
            "per_token_kl": [json_number(x.kl) for x in d],
            "partial": [p.partial for p in self.positions],
            "per_token_verdict": [p.verdict(self.cos_tol) for p in self.positions],
            "per_token_size_mismatch": [p.size_mismatch for p in self.positions],
            "unmatched": {"a": self.unmatched[0], "b": self.unmatched[1]},
            "malformed": [
                {"input": side, "location": str(m.location), "message": m.message} for side, m in self.malformed
            ],
            "token_ids": self.tokens.to_json(),
        }
        if self.track_token is not None:
            out["tracked_token"] = {
                "id": self.track_token,
                "rank_a": [x.rank_a for x in d],
                "rank_b": [x.rank_b for x in d],
            }
        return out


def _logits_only(is_logits: Callable[[str | None], bool]) -> Callable[[RecordBatch], RecordBatch]:
    def keep(batch: RecordBatch) -> RecordBatch:
        rows = np.flatnonzero(batch.checkpoint.per_row(is_logits, dtype=bool))
        return batch if len(rows) == len(batch) else batch.take(rows)

    return keep


def _vector(batch: RecordBatch, i: int) -> tuple[np.ndarray, bool]:
    full = flat_tensor(batch, i)
    return (full, False) if full is not None else (batch.row_values(i), True)


def compare_per_token(
    a: Trace,
    b: Trace,
    cos_tol: float = DEFAULT_COS_TOL,
    key: tuple[str, ...] = ("token_idx",),
    logits: tuple[str, ...] = ("logits",),
    track_token: int | None = None,
    maps: Sequence[str] = (),
    progress: Callable[[float], None] | None = None,
    maps_a: Sequence[str] = (),
    maps_b: Sequence[str] = (),
    token_offset: int = 0,
) -> PerTokenReport:
    opts = CompareOptions(
        key=key, logits=logits, maps=list(maps), maps_a=list(maps_a), maps_b=list(maps_b), token_offset=token_offset
    )
    plan = WalkPlan.of(a, b, opts, tolerances=load_tolerances("default"))  # rounds unmeasured: no rule applies
    pairs = plan.pairs(a, b, keep=_logits_only(plan.is_logits))
    leading_rule = pairs.rules.leading_rule
    side_a, side_b = pairs.sides
    positions = []
    for rnd in pairs.rounds():
        for i, j in zip(rnd.ia, rnd.ib):
            (va, pa), (vb, pb) = _vector(rnd.a, int(i)), _vector(rnd.b, int(j))
            tok = rnd.a.token_idx[i]
            positions.append(
                Position(
                    None if tok == NONE else int(tok),
                    logits_diff(va, vb, track_token),
                    pa or pb,
                    (str(rnd.a.location(int(i))), str(rnd.b.location(int(j)))),
                    (int(rnd.a.numel[i]), int(rnd.b.numel[j])),
                    leading_rule,
                )
            )
        if progress:
            progress((a.progress() + b.progress()) / 2)
    read_a, read_b = pairs.aligner.rows_read
    if read_a == 0 or read_b == 0:
        empty = a.path if read_a == 0 else b.path
        raise OrchlogError(
            f"{empty}: no logits records (checkpoints matching {', '.join(logits)}); name them with --logits GLOB"
        )
    positions.sort(key=lambda p: -1 if p.token_idx is None else p.token_idx)
    malformed = [
        (name, d) for name, t, side in (("a", a, side_a), ("b", b, side_b)) for d in t.diagnostics + side.diagnostics
    ]
    tokens = TokenCheck.between(side_a.tokens, side_b.tokens, token_offset)
    return PerTokenReport(
        positions,
        cos_tol,
        (a.path, b.path),
        (len(pairs.aligner.leftover_a), len(pairs.aligner.leftover_b)),
        malformed,
        track_token,
        tokens,
    )
