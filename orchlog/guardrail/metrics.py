"""A pair's numbers: the logits metrics of each shared token position, and their aggregates.

Per position the metrics are those of `orchlog compare --per-token`
(orchlog.compare.measuring.logits): max and p99 absolute difference, top-1 of each
side, cosine similarity, L2 and KL(reference || test). Aggregates over the
positions: the largest max_abs_diff and p99_abs_diff (so a bound on them
holds at every position; an exact p99 over all positions would need every
difference at once), the share of positions whose top-1 agrees, the mean
and lowest cosine, the mean and largest KL. Any NaN in a column makes its
aggregate NaN, which no bound accepts.
"""

from __future__ import annotations

import math
from typing import Any

from orchlog.compare.measuring.logits import logits_diff
from orchlog.guardrail.sides import TokenRow
from orchlog.numbers import json_number
from orchlog.records import record

AGGREGATES = ("max_abs_diff", "p99_abs_diff", "top1_agreement", "cos_sim_mean", "cos_sim_min", "kl_mean", "kl_max")


@record(frozen=True)
class TokenMetrics:
    token_idx: int
    token_id: int | None  # the reference side's
    max_abs_diff: float
    p99_abs_diff: float
    top1_a: int
    top1_b: int
    cos_sim: float
    l2: float
    kl: float

    @property
    def top1_match(self) -> bool:
        return self.top1_a == self.top1_b

    @staticmethod
    def of(a: TokenRow, b: TokenRow) -> TokenMetrics:
        d = logits_diff(a.logits, b.logits)
        return TokenMetrics(a.token_idx, a.token_id, d.max_abs, d.p99_abs, d.top1_a, d.top1_b, d.cosine, d.l2, d.kl)

    def value_for(self, aggregate: str) -> float:
        """This position's own value of an aggregated metric (top-1 agreement: 1 or 0)."""
        return {
            "max_abs_diff": self.max_abs_diff,
            "p99_abs_diff": self.p99_abs_diff,
            "top1_agreement": float(self.top1_match),
            "cos_sim_mean": self.cos_sim,
            "cos_sim_min": self.cos_sim,
            "kl_mean": self.kl,
            "kl_max": self.kl,
        }[aggregate]

    def to_json(self) -> dict[str, Any]:
        return {
            "token_idx": self.token_idx,
            "token_id": self.token_id,
            "max_abs_diff": json_number(self.max_abs_diff),
            "p99_abs_diff": json_number(self.p99_abs_diff),
            "top1_match": self.top1_match,
            "top1_a": self.top1_a,
            "top1_b": self.top1_b,
            "cos_sim": json_number(self.cos_sim),
            "l2": json_number(self.l2),
            "kl": json_number(self.kl),
        }


def _max(values: list[float]) -> float:
    return math.nan if not values or any(math.isnan(v) for v in values) else max(values)


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def aggregate(tokens: list[TokenMetrics]) -> dict[str, float]:
    """The pair's aggregates, keyed as AGGREGATES; NaN when no position was compared."""
    cos = [t.cos_sim for t in tokens]
    kl = [t.kl for t in tokens]
    return {
        "max_abs_diff": _max([t.max_abs_diff for t in tokens]),
        "p99_abs_diff": _max([t.p99_abs_diff for t in tokens]),
        "top1_agreement": _mean([float(t.top1_match) for t in tokens]),
        "cos_sim_mean": _mean(cos),
        "cos_sim_min": -_max([-c for c in cos]),
        "kl_mean": _mean(kl),
        "kl_max": _max(kl),
    }
