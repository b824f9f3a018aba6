"""How the error grows layer by layer: per token and layer, the worst error among its pairs.

Kept as arrays, one row per (token, layer) -- or per (token, checkpoint)
for records outside the layers -- merged round by round, so that a long
trace costs a few numbers per token and layer, and only for the tokens
still in play (see Findings._prune).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from orchlog.compare.grading import TIER_NAMES
from orchlog.read.batch import NONE
from orchlog.strings import Strings

_FIELDS = (
    "token",
    "label",
    "first_order",
    "pairs",
    "failed",
    "max_abs",
    "min_cosine",
    "worst_severity",
    "worst_name",
    "worst_tier",
)


@dataclasses.dataclass
class GrowthRow:
    """The worst error among one token's pairs in one layer (or one checkpoint outside the layers)."""

    label: str
    layer: int | None
    first_order: int
    pairs: int
    failed: int
    max_abs: float
    min_cosine: float
    worst_checkpoint: str
    worst_tier: str


def run_starts(*columns: np.ndarray) -> np.ndarray:
    """Indices where a run of equal keys begins, in columns sorted by those keys."""
    n = len(columns[0])
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
    for c in columns:
        change[1:] |= c[1:] != c[:-1]
    return np.flatnonzero(change)


def _merge(rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One row per (token, label): counts add up, extremes combine, the worst pair wins."""
    by = np.lexsort((rows["worst_severity"], rows["label"], rows["token"]))
    starts = run_starts(rows["token"][by], rows["label"][by])
    if len(starts) == len(by):
        return rows
    worst = by[np.r_[starts[1:], len(by)] - 1]  # highest severity sorts last within its group
    first = by[starts]
    return {
        "token": rows["token"][first],
        "label": rows["label"][first],
        "first_order": np.minimum.reduceat(rows["first_order"][by], starts),
        "pairs": np.add.reduceat(rows["pairs"][by], starts),
        "failed": np.add.reduceat(rows["failed"][by], starts),
        "max_abs": np.fmax.reduceat(rows["max_abs"][by], starts),
        "min_cosine": np.fmin.reduceat(rows["min_cosine"][by], starts),
        "worst_severity": rows["worst_severity"][worst],
        "worst_name": rows["worst_name"][worst],
        "worst_tier": rows["worst_tier"][worst],
    }


class Growth:
    def __init__(self) -> None:
        self.rows = {
            f: np.zeros(0, dtype=np.float64 if f in ("max_abs", "min_cosine", "worst_severity") else np.int64)
            for f in _FIELDS
        }
        self._names: dict[str, int] = {}

    def add(
        self,
        tokens: np.ndarray,
        layers: np.ndarray,
        names: Strings,
        order: np.ndarray,
        failed: np.ndarray,
        max_abs: np.ndarray,
        cosine: np.ndarray,
        severity: np.ndarray,
        tier: np.ndarray,
    ) -> None:
        name_ids = names.per_row(lambda s: self._names.setdefault(s or "", len(self._names)), dtype=np.int64)
        label = np.where(layers != NONE, layers, -2 - name_ids)
        sev = np.where(np.isnan(severity), -np.inf, severity)
        one = np.ones(len(tokens), dtype=np.int64)
        new = {
            "token": tokens,
            "label": label,
            "first_order": order,
            "pairs": one,
            "failed": failed.astype(np.int64),
            "max_abs": max_abs,
            "min_cosine": cosine,
            "worst_severity": sev,
            "worst_name": name_ids,
            "worst_tier": tier.astype(np.int64),
        }
        self.rows = _merge({f: np.concatenate([self.rows[f], new[f]]) for f in _FIELDS})

    def keep(self, tokens: np.ndarray) -> None:
        """Forget every token not in `tokens`."""
        mask = np.isin(self.rows["token"], tokens)
        if not mask.all():
            self.rows = {f: col[mask] for f, col in self.rows.items()}

    def tokens(self) -> list[int]:
        """Every token with rows, in order (-1, records outside any token, first)."""
        return sorted(set(self.rows["token"].tolist()))

    def table(self, token: int) -> list[GrowthRow]:
        """The rows of one token, in execution order."""
        names = list(self._names)
        sel = np.flatnonzero(self.rows["token"] == token)
        sel = sel[np.argsort(self.rows["first_order"][sel], kind="stable")]
        out = []
        for i in sel:
            r = {f: self.rows[f][i] for f in _FIELDS}
            layer = int(r["label"]) if r["label"] >= 0 else None
            label = f"layer {layer}" if layer is not None else names[-2 - int(r["label"])]
            out.append(
                GrowthRow(
                    label,
                    layer,
                    int(r["first_order"]),
                    int(r["pairs"]),
                    int(r["failed"]),
                    float(r["max_abs"]),
                    float(r["min_cosine"]),
                    names[int(r["worst_name"])],
                    TIER_NAMES[int(r["worst_tier"])],
                )
            )
        return out
