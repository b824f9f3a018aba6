"""WeightsReport: what `orchlog weights` found, as a value; its JSON with stable keys (orchlog/report/weights_text.py
renders it for people)."""

from __future__ import annotations

import dataclasses
from typing import Any

from orchlog.compare.grading.tiers import TIER_NAMES
from orchlog.compare.result import rule_json
from orchlog.numbers import json_number
from orchlog.records import record
from orchlog.tolerances.rules import Tolerances
from orchlog.weights.compare import AS_STORED, WeightRow
from orchlog.weights.tensors import WeightSource

REPORT_VERSION = "orchlog-weights/1"
OK, DIVERGED, NO_MATCH = "ok", "diverged", "no_match"


@record
class Input:
    path: str
    format: str
    arch: str | None
    tensors: int

    @staticmethod
    def of(source: WeightSource) -> Input:
        return Input(source.path, source.format, source.arch, len(source.tensors))


@record
class WeightsReport:
    inputs: tuple[Input, Input]
    map: str
    tolerances: Tolerances
    rows: list[WeightRow]
    only_a: list[str]
    only_b: list[str]

    @property
    def status(self) -> str:
        if not self.rows:
            return NO_MATCH
        return DIVERGED if any(r.failed for r in self.rows) else OK

    def __bool__(self) -> bool:
        return self.status == OK

    @property
    def exit_code(self) -> int:
        return 0 if self else 1

    def failing(self) -> list[WeightRow]:
        return [r for r in self.rows if r.failed]

    def counts(self) -> dict[str, int]:
        return {name: sum(1 for r in self.rows if r.tier == name) for name in TIER_NAMES}

    def relations(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.relation] = out.get(r.relation, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "report": REPORT_VERSION,
            "status": self.status,
            "inputs": {side: dataclasses.asdict(i) for side, i in zip("ab", self.inputs)},
            "map": self.map,
            "tolerances": {
                "source": self.tolerances.source,
                "rules": [rule_json(r) for r in self.tolerances.all_rules],
            },
            "counts": {
                "pairs": len(self.rows),
                "tiers": self.counts(),
                "relations": self.relations(),
                "only_a": len(self.only_a),
                "only_b": len(self.only_b),
            },
            "weights": [row_json(r) for r in self.rows],
            "only_in": {"a": self.only_a, "b": self.only_b},
        }

    def __str__(self) -> str:
        """The verdict in one line; orchlog.report renders the whole report as text or Markdown."""
        if self.status == NO_MATCH:
            return "no weight names paired up; check --map (exit 1)"
        bad = self.failing()
        if not bad:
            return f"ok, all {len(self.rows)} weights match"
        moved = sum(1 for r in bad if r.relation != AS_STORED)
        extra = f" ({moved} match only transposed or permuted)" if moved else ""
        return f"diverged: {len(bad)} of {len(self.rows)} weights differ{extra}"


def row_json(r: WeightRow) -> dict[str, Any]:
    return {
        "names": {"a": r.name_a, "b": r.name_b},
        "shapes": {"a": list(r.shape_a), "b": list(r.shape_b)},
        "dtypes": {"a": r.dtype_a, "b": r.dtype_b},
        "layout": r.layout,
        "relation": r.relation,
        "relation_means": r.relation_means,
        "tier": r.tier,
        "metric": r.metric,
        "value": json_number(r.value),
        "rule": r.rule,
        "reason": r.reason,
        "metrics": {k: json_number(v) for k, v in r.metrics.items()},
        "signatures": [f.to_json() for f in r.signatures],
    }
