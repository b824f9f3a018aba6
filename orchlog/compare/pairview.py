"""PairView: one pair, lifted out of the round's columns for the report."""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from orchlog.batch import NONE
from orchlog.compare.grading import TIER_NAMES, Grades
from orchlog.compare.metrics import BASES, COLUMNS, PairTable
from orchlog.compare.tolerances import Tolerances
from orchlog.trace import TraceRecord

LEADING = 8  # values shown side by side


def _opt(v: int) -> int | None:
    return None if v == NONE else int(v)


def exec_order(t: PairTable) -> np.ndarray:
    """Execution order of each pair: the reference record's emitter counter, else its place in the file."""
    seq = t.a.seq[t.ia]
    return np.where(seq >= 0, seq, t.a.order[t.ia])


@dataclasses.dataclass
class PairView:
    checkpoint: str
    layer: int | None
    stage: str | None
    token_idx: int | None
    step: int | None
    rank: int
    order: int
    tier: str
    severity: float
    metric: str
    value: float
    rule: str
    reason: str
    basis: str
    hash: str | None  # "equal", "differs", or None when a side has no hash
    metrics: dict[str, float]
    names: tuple[str, str]  # each side's own checkpoint name (before --map)
    dtypes: tuple[str | None, str | None]
    shapes: tuple[tuple[int, ...] | None, tuple[int, ...] | None]
    locations: tuple[str, str]
    values: tuple[list[float], list[float]]
    mismatches: tuple[str, ...]  # "dtype", "shape", "numel"
    records: tuple[TraceRecord, TraceRecord] | None = None  # kept only where tensors may be dumped

    @property
    def failed(self) -> bool:
        return self.tier == "fail"

    def where(self) -> str:
        parts = [self.checkpoint]
        if self.layer is not None:
            parts.append(f"layer {self.layer}")
        if self.stage is not None and self.stage != self.checkpoint:
            parts.append(f"stage {self.stage}")
        if self.token_idx is not None:
            parts.append(f"token {self.token_idx}")
        if self.step is not None:
            parts.append(f"step {self.step}")
        if self.rank:
            parts.append(f"rank {self.rank}")
        return ", ".join(parts)

    def key(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "layer": self.layer, "stage": self.stage,
                "token_idx": self.token_idx, "step": self.step, "rank": self.rank}


def make_view(t: PairTable, g: Grades, p: int, tolerances: Tolerances, order: int, keep_records: bool = False) -> PairView:
    a, b, i, j = t.a, t.b, int(t.ia[p]), int(t.ib[p])
    rule = tolerances.all_rules[int(g.rule[p])]
    mismatches = tuple(name for name, flags in (("dtype", t.dtype_mismatch), ("shape", t.shape_mismatch),
                                                ("numel", t.numel_mismatch)) if flags[p])
    state = int(t.hash_state[p])
    return PairView(
        checkpoint=a.checkpoint[i], layer=_opt(a.layer[i]), stage=a.stage[i], token_idx=_opt(a.token_idx[i]),
        step=_opt(a.step[i]), rank=int(a.rank[i]), order=order, tier=TIER_NAMES[int(g.tier[p])],
        severity=float(g.severity[p]), metric=rule.metric, value=float(g.value[p]), rule=rule.name,
        reason=g.reason[p], basis=BASES[int(t.basis[p])], hash={1: "equal", 0: "differs"}.get(state),
        metrics={c: float(t.m[c][p]) for c in COLUMNS if not math.isnan(t.m[c][p])},
        names=(a.renamed_from[i] or a.checkpoint[i], b.renamed_from[j] or b.checkpoint[j]),
        dtypes=(a.dtype[i], b.dtype[j]), shapes=(a.shape_of(i), b.shape_of(j)),
        locations=(str(a.location(i)), str(b.location(j))),
        values=(a.row_values(i)[:LEADING].tolist(), b.row_values(j)[:LEADING].tolist()),
        mismatches=mismatches, records=(a.record(i), b.record(j)) if keep_records else None,
    )
