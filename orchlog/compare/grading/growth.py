"""How the error grows layer by layer: per token and layer, the worst error among its pairs.

Kept as arrays, one row per (token, layer) -- or per (token, checkpoint)
for records outside the layers -- merged round by round, so that a long
trace costs a few numbers per token and layer, and only for the tokens
still in play (see Findings.prune). Of equally bad pairs the later one (by
execution order, then place in the trace) is a row's worst, whatever order
the pairs arrive in.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from orchlog.compare.grading.tiers import TIER_NAMES, UNDECIDED_TIER
from orchlog.read.batch import NONE
from orchlog.records import record
from orchlog.strings import Strings

_FIELDS = (
    "token",
    "label",
    "first_order",
    "pairs",
    "failed",
    "undecided",
    "max_abs",
    "min_cosine",
    "noise_ratio",
    "worst_severity",
    "worst_name",
    "worst_tier",
    "worst_order",
    "worst_pos",
)


@record
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
    noise_ratio: float = math.nan  # three-way: the largest error / noise among its pairs (NaN: no noise)


def _packed(token: np.ndarray, label: np.ndarray) -> np.ndarray:
    """(token, label) as one int64, a dictionary key that costs no tuple: labels span +-2**39, tokens 2**23."""
    return (token.astype(np.int64) << 40) + (label.astype(np.int64) + (1 << 39))


def run_starts(*columns: np.ndarray) -> np.ndarray:
    """Indices where a run of equal keys begins, in columns sorted by those keys."""
    n = len(columns[0])
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
    for c in columns:
        change[1:] |= c[1:] != c[:-1]
    return np.flatnonzero(change)


def _reduce(rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One row per (token, label): counts add up, extremes combine, the worst pair wins (of equally bad
    pairs, the later one)."""
    # One int64 sort by (token, label), then each group's worst picked by three maxima in turn (severity,
    # then order, then place), the last of any tie: what a five-key lexsort gave, at a third of its time.
    key = _packed(rows["token"], rows["label"])
    by = np.argsort(key, kind="stable")
    starts = run_starts(key[by])
    if len(starts) == len(by):
        return rows
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(by)]))
    candidate = np.ones(len(by), dtype=bool)
    for field in ("worst_severity", "worst_order", "worst_pos"):  # no NaN: add() makes a NaN severity -inf
        values = rows[field][by]
        lowest = -np.inf if values.dtype.kind == "f" else np.iinfo(values.dtype).min
        most = np.maximum.reduceat(np.where(candidate, values, lowest), starts)
        candidate &= values == most[group]
    worst = by[np.maximum.reduceat(np.where(candidate, np.arange(len(by)), -1), starts)]
    first = by[starts]
    return {
        "token": rows["token"][first],
        "label": rows["label"][first],
        "first_order": np.minimum.reduceat(rows["first_order"][by], starts),
        "pairs": np.add.reduceat(rows["pairs"][by], starts),
        "failed": np.add.reduceat(rows["failed"][by], starts),
        "undecided": np.add.reduceat(rows["undecided"][by], starts),
        "max_abs": np.fmax.reduceat(rows["max_abs"][by], starts),
        "min_cosine": np.fmin.reduceat(rows["min_cosine"][by], starts),
        "noise_ratio": np.fmax.reduceat(rows["noise_ratio"][by], starts),
        "worst_severity": rows["worst_severity"][worst],
        "worst_name": rows["worst_name"][worst],
        "worst_tier": rows["worst_tier"][worst],
        "worst_order": rows["worst_order"][worst],
        "worst_pos": rows["worst_pos"][worst],
    }


def _empty(n: int = 0) -> dict[str, np.ndarray]:
    return {
        f: np.zeros(
            n, dtype=np.float64 if f in ("max_abs", "min_cosine", "noise_ratio", "worst_severity") else np.int64
        )
        for f in _FIELDS
    }


# Per-stage rows: the label packs the checkpoint's name code and its layer (+1, 0 for none).
_LAYER_SPAN = 1 << 20


class Growth:
    """The (token, label) rows, each found through an index, so that adding a round costs that round's rows,
    whatever the table already holds (the heatmap keeps every token's).

    A label is a layer (all the checkpoints of one layer together) or a checkpoint outside the layers;
    with `by_stage`, every checkpoint of every layer is a label of its own (the HTML report's per-stage
    chart of the diverging layer)."""

    def __init__(self, by_stage: bool = False) -> None:
        self.by_stage = by_stage
        self._cols = _empty(64)
        self._n = 0
        self._where: dict[int, int] = {}  # _packed(token, label) -> row
        self._names: dict[str, int] = {}

    @property
    def rows(self) -> dict[str, np.ndarray]:
        return {f: col[: self._n] for f, col in self._cols.items()}

    def add(
        self,
        tokens: np.ndarray,
        layers: np.ndarray,
        names: Strings,
        order: np.ndarray,
        pos: np.ndarray,
        failed: np.ndarray,
        max_abs: np.ndarray,
        cosine: np.ndarray,
        severity: np.ndarray,
        tier: np.ndarray,
        noise_ratio: np.ndarray | None = None,
    ) -> None:
        name_ids = names.per_row(lambda s: self._names.setdefault(s or "", len(self._names)), dtype=np.int64)
        if self.by_stage:
            label = -2 - (name_ids * _LAYER_SPAN + np.where(layers != NONE, layers + 1, 0))
        else:
            label = np.where(layers != NONE, layers, -2 - name_ids)
        sev = np.where(np.isnan(severity), -np.inf, severity)
        new = {
            "token": tokens,
            "label": label,
            "first_order": order,
            "pairs": np.ones(len(tokens), dtype=np.int64),
            "failed": failed.astype(np.int64),
            "undecided": (tier == UNDECIDED_TIER).astype(np.int64),
            "max_abs": max_abs,
            "min_cosine": cosine,
            "noise_ratio": np.full(len(tokens), np.nan) if noise_ratio is None else noise_ratio,
            "worst_severity": sev,
            "worst_name": name_ids,
            "worst_tier": tier.astype(np.int64),
            "worst_order": np.asarray(order, dtype=np.int64),
            "worst_pos": np.asarray(pos, dtype=np.int64),
        }
        self._merge(_reduce(new))

    def _merge(self, new: dict[str, np.ndarray]) -> None:
        """Fold rows (one per token and label) into the table: into the row of their key, or as new rows."""
        keys = _packed(new["token"], new["label"]).tolist()
        at = np.fromiter(map(self._where.get, keys, itertools.repeat(-1)), dtype=np.int64, count=len(keys))
        old = np.flatnonzero(at >= 0)
        if len(old):
            c, i = self._cols, at[old]
            c["first_order"][i] = np.minimum(c["first_order"][i], new["first_order"][old])
            c["pairs"][i] += new["pairs"][old]
            c["failed"][i] += new["failed"][old]
            c["undecided"][i] += new["undecided"][old]
            c["max_abs"][i] = np.fmax(c["max_abs"][i], new["max_abs"][old])
            c["min_cosine"][i] = np.fmin(c["min_cosine"][i], new["min_cosine"][old])
            c["noise_ratio"][i] = np.fmax(c["noise_ratio"][i], new["noise_ratio"][old])
            sev, was = new["worst_severity"][old], c["worst_severity"][i]
            new_order, was_order = new["worst_order"][old], c["worst_order"][i]
            later = (new_order > was_order) | ((new_order == was_order) & (new["worst_pos"][old] > c["worst_pos"][i]))
            wins = (sev > was) | ((sev == was) & later)  # a tie goes to the later pair
            for f in ("worst_severity", "worst_name", "worst_tier", "worst_order", "worst_pos"):
                c[f][i[wins]] = new[f][old][wins]
        fresh = np.flatnonzero(at < 0)
        if len(fresh):
            self._grow(self._n + len(fresh))
            for f, col in self._cols.items():
                col[self._n : self._n + len(fresh)] = new[f][fresh]
            self._where.update(zip((keys[k] for k in fresh.tolist()), range(self._n, self._n + len(fresh))))
            self._n += len(fresh)

    def _grow(self, n: int) -> None:
        if n > len(self._cols["token"]):
            bigger = _empty(max(n, 2 * len(self._cols["token"])))
            for f, col in self._cols.items():
                bigger[f][: self._n] = col[: self._n]
            self._cols = bigger

    def keep(self, tokens: np.ndarray) -> None:
        """Forget every token not in `tokens`."""
        mask = np.isin(self._cols["token"][: self._n], tokens)
        if not mask.all():
            kept = {f: col[: self._n][mask] for f, col in self._cols.items()}
            self._cols, self._n = _empty(max(64, len(kept["token"]))), 0
            self._where = {}
            self._merge(kept)

    def drop_after(self, token: int) -> None:
        """Forget every token after `token`."""
        kept = self._cols["token"][: self._n] <= token
        if not kept.all():
            self.keep(_distinct(self._cols["token"][: self._n][kept]))

    def tokens(self) -> list[int]:
        """Every token with rows, in order (-1, records outside any token, first)."""
        tokens: list[int] = _distinct(self._cols["token"][: self._n]).tolist()
        return tokens

    def table(self, token: int) -> list[GrowthRow]:
        """The rows of one token, in execution order."""
        sel = np.flatnonzero(self._cols["token"][: self._n] == token)
        # Rows that start at the same place (records of several ranks share emitter counters) go by label.
        rows = self._rows(sel)
        return sorted(rows, key=lambda r: (r.first_order, r.layer is None, r.layer or 0, r.label))

    def tables(self) -> dict[int, list[GrowthRow]]:
        """The rows of every token, each in execution order: table(t) for all t at once."""
        rows = self.rows
        by = np.lexsort((rows["first_order"], rows["token"]))
        starts = run_starts(rows["token"][by])
        ends = np.r_[starts[1:], len(by)]
        out = self._rows(by)
        return {int(rows["token"][by[s]]): out[s:e] for s, e in zip(starts.tolist(), ends.tolist())}

    def renamed_labels(self, labels: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Labels with each name code `n` replaced by `ids[n]` (tables merged into one name list)."""
        out: np.ndarray = labels.copy()
        named = labels < 0
        if self.by_stage:
            name_id, layer_code = np.divmod(-2 - labels[named], _LAYER_SPAN)
            out[named] = -2 - (ids[name_id] * _LAYER_SPAN + layer_code)
        else:
            out[named] = -2 - ids[-2 - labels[named]]
        return out

    def label_text(self, label_id: int, names: list[str] | None = None) -> tuple[str, int | None]:
        """A label's text ("layer 3", or a checkpoint's name) and its layer."""
        names = list(self._names) if names is None else names
        if self.by_stage:
            name_id, layer_code = divmod(-2 - label_id, _LAYER_SPAN)
            return names[name_id], (layer_code - 1 if layer_code else None)
        if label_id >= 0:
            return f"layer {label_id}", label_id
        return names[-2 - label_id], None

    def _rows(self, sel: np.ndarray) -> list[GrowthRow]:
        names = list(self._names)
        c = {f: self._cols[f][sel].tolist() for f in _FIELDS}
        out = []
        for k in range(len(sel)):
            label, layer = self.label_text(int(c["label"][k]), names)
            out.append(
                GrowthRow(
                    label,
                    layer,
                    int(c["first_order"][k]),
                    int(c["pairs"][k]),
                    int(c["failed"][k]),
                    float(c["max_abs"][k]),
                    float(c["min_cosine"][k]),
                    names[int(c["worst_name"][k])],
                    TIER_NAMES[int(c["worst_tier"][k])],
                    float(c["noise_ratio"][k]),
                )
            )
        return out


def _distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values; np.unique without its outputs imports numpy.ma (9 ms of a small compare's start)."""
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered
