"""PairView: one pair, lifted out of the round's columns for the report."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from orchlog.compare.grading.tiers import TIER_NAMES, Grades
from orchlog.compare.measuring import bounds
from orchlog.compare.measuring.metrics import BASES, COLUMNS, TENSOR, PairTable
from orchlog.compare.pairing.aligned import Alignment
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.trace import TraceRecord
from orchlog.records import record
from orchlog.tolerances.rules import Rule, Tolerances

LEADING = 8  # values shown side by side


def _opt(v: int) -> int | None:
    return None if v == NONE else int(v)


def exec_order(t: PairTable) -> np.ndarray:
    """Execution order of each pair: the reference record's emitter counter, else its place in the file."""
    seq = t.a.seq[t.ia]
    order: np.ndarray = np.where(seq >= 0, seq, t.a.order[t.ia])
    return order


@record
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
    mismatches: tuple[str, ...]  # "dtype", "shape", "numel", "window" (extents differ, no window allowed)
    records: tuple[TraceRecord, TraceRecord] | None = None  # kept only where tensors may be dumped
    alignment: Alignment | None = None  # how the two tensors were lined up, when not as written
    # Of a tensor gathered from shards: the ranks whose own piece fails the pair's rule, when not all of them.
    shard_ranks: list[int] | None = None
    interval: tuple[float, float] = (float("nan"), float("nan"))  # the graded metric's proven [lo, hi]
    bounds: dict[str, tuple[float, float]] = dataclasses.field(default_factory=dict)  # partial evidence only
    blake3: tuple[str | None, str | None] = (None, None)
    numel: tuple[int | None, int | None] = (None, None)
    # Each side's record as its emitter keyed it, for a selector that finds it again.
    own_keys: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    # The reference record's place in its trace: unique per pair, it breaks ties of `order` (records of
    # several ranks share emitter counters), so that what the report picks never depends on reading order.
    pos: int = -1
    # Three-way (--noise): the noise ‖REF − REF2‖ at this key, the proven interval of error / noise, and
    # whether the noise decided the pair; None without a second reference's record for it.
    noise: float | None = None
    noise_ratio: tuple[float, float] | None = None
    by_noise: bool = False
    noise_multiple: float | None = None  # the multiple it was graded against

    @property
    def rank_key(self) -> tuple[int, int]:
        """Execution order, then place in the trace: the total order every choice of the report follows."""
        return (self.order, self.pos)

    @property
    def failed(self) -> bool:
        return self.tier == "fail"

    @property
    def undecided(self) -> bool:
        return self.tier == "undecided"

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
        if self.shard_ranks:
            ranks = ", ".join(str(r) for r in self.shard_ranks)
            parts.append(
                f"in the shard of rank {ranks}" if len(self.shard_ranks) == 1 else f"in the shards of ranks {ranks}"
            )
        return ", ".join(parts)

    def key(self) -> dict[str, Any]:
        return {
            "checkpoint": self.checkpoint,
            "layer": self.layer,
            "stage": self.stage,
            "token_idx": self.token_idx,
            "step": self.step,
            "rank": self.rank,
        }


def _leading(va: np.ndarray, vb: np.ndarray, alignment: Alignment | None) -> tuple[list[float], list[float]]:
    """The first values side by side: of the compared window when there is one, else as each side wrote them."""
    if alignment is not None and alignment.window is not None:
        va, vb = alignment.window.leading(va, vb)
    return va[:LEADING].tolist(), vb[:LEADING].tolist()


def _shard_ranks(alignment: Alignment | None, rule: Rule) -> list[int] | None:
    """The ranks whose piece fails the rule, when some pieces pass: the evidence names them."""
    shards = alignment.shards if alignment is not None else None
    if shards is None:
        return None
    failing = shards.failing(rule.metric, rule.threshold, rule.higher_is_better, rule.cos_tol)
    return failing if 0 < len(failing) < len(shards.ranks) else None


def make_views(
    t: PairTable, g: Grades, rows: np.ndarray, tolerances: Tolerances, order: np.ndarray, keep_records: bool = False
) -> list[PairView]:
    """Views of the pairs `rows` of a round (column work done once for all of them)."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows):
        return []
    a, b, ia, ib = t.a, t.b, t.ia[rows], t.ib[rows]
    rules = tolerances.all_rules
    block = np.column_stack([t.m[c][rows] for c in COLUMNS]).tolist()
    flags = np.column_stack(
        [t.dtype_mismatch[rows], t.shape_mismatch[rows], t.numel_mismatch[rows], t.window_refused[rows]]
    ).tolist()
    alignment = t.alignment[rows].tolist()
    names_a, names_b = a.checkpoint[ia].tolist(), b.checkpoint[ib].tolist()
    assert a.renamed_from is not None and b.renamed_from is not None, "RecordBatch.__post_init__ fills them"
    own_a, own_b = a.renamed_from[ia].tolist(), b.renamed_from[ib].tolist()
    cols = {name: getattr(a, name)[ia].tolist() for name in ("layer", "token_idx", "step", "rank")}
    stage, dtype_a, dtype_b = a.stage[ia].tolist(), a.dtype[ia].tolist(), b.dtype[ib].tolist()
    tier, sev, value = g.tier[rows].tolist(), g.severity[rows].tolist(), g.value[rows].tolist()
    rule_idx = g.rule[rows].tolist()
    basis, state, where = t.basis[rows].tolist(), t.hash_state[rows].tolist(), order[rows].tolist()
    g_lo, g_hi = g.lo[rows].tolist(), g.hi[rows].tolist()
    partial = [(m, t.lo[m][rows].tolist(), t.hi[m][rows].tolist()) for m in bounds.BOUNDED if m in t.lo]
    hashes = (a.blake3[ia].tolist(), b.blake3[ib].tolist())
    numel = (a.numel[ia].tolist(), b.numel[ib].tolist())
    own = [_own_keys(a, ia), _own_keys(b, ib)]
    pos = a.order[ia].tolist()
    noise, r_lo, r_hi = g.noise[rows].tolist(), g.ratio_lo[rows].tolist(), g.ratio_hi[rows].tolist()
    by_noise = g.by_noise[rows].tolist()
    out = []
    for k, (p, i, j) in enumerate(zip(rows.tolist(), ia.tolist(), ib.tolist())):
        rule = rules[rule_idx[k]]
        out.append(
            PairView(
                checkpoint=names_a[k],
                layer=_opt(cols["layer"][k]),
                stage=stage[k],
                token_idx=_opt(cols["token_idx"][k]),
                step=_opt(cols["step"][k]),
                rank=cols["rank"][k],
                order=where[k],
                tier=TIER_NAMES[tier[k]],
                severity=sev[k],
                metric="noise_ratio" if by_noise[k] else rule.metric,
                value=value[k],
                rule=rule.name,
                reason=g.reason[p],
                basis=BASES[basis[k]],
                hash={1: "equal", 0: "differs"}.get(state[k]),
                metrics={c: v for c, v in zip(COLUMNS, block[k]) if v == v},  # v == v: not NaN
                names=(own_a[k] or names_a[k], own_b[k] or names_b[k]),
                dtypes=(dtype_a[k], dtype_b[k]),
                shapes=(a.shape_of(i), b.shape_of(j)),
                locations=(str(a.location(i)), str(b.location(j))),
                values=_leading(a.row_values(i), b.row_values(j), alignment[k]),
                mismatches=tuple(kind for kind, flag in zip(("dtype", "shape", "numel", "window"), flags[k]) if flag),
                records=(a.record(i, own=True), b.record(j, own=True)) if keep_records else None,
                alignment=alignment[k],
                shard_ranks=_shard_ranks(alignment[k], rule),
                interval=(r_lo[k], r_hi[k]) if by_noise[k] else (g_lo[k], g_hi[k]),
                bounds=_interesting(partial, k) if basis[k] != TENSOR else {},
                blake3=(hashes[0][k].decode() or None, hashes[1][k].decode() or None),
                numel=(_opt(numel[0][k]), _opt(numel[1][k])),
                own_keys=(own[0][k], own[1][k]),
                pos=pos[k],
                noise=None if noise[k] != noise[k] else noise[k],  # x != x: NaN
                noise_ratio=None if noise[k] != noise[k] else (r_lo[k], r_hi[k]),
                by_noise=by_noise[k],
                noise_multiple=None if noise[k] != noise[k] else g.multiple,
            )
        )
    return out


class DeferredView:
    """A pair kept for the report whose PairView is made when first asked for, from a compact copy of its
    round's rows (PairTable.take_owned). The walk keeps each token's earliest failing pair until it knows
    which token diverges; a view with copies of both records for each of thousands of tokens, nearly all
    never shown, was a sixth of a large compare's time."""

    __slots__ = ("rank_key", "_rows", "_view")

    def __init__(self, rows: KeptRows, row: int) -> None:
        self.rank_key: tuple[int, int] = (int(rows.order[row]), int(rows.table.a.order[row]))
        self._rows: tuple[KeptRows, int] | None = (rows, row)
        self._view: PairView | None = None

    @property
    def view(self) -> PairView:
        if self._view is None:
            assert self._rows is not None, "a view is made before its rows are let go"
            rows, row = self._rows
            (view,) = make_views(rows.table, rows.grades, np.array([row]), rows.tolerances, rows.order, True)
            view.order, view.pos = self.rank_key  # as renumbered since, if it was
            self._view, self._rows = view, None
        return self._view

    @property
    def made(self) -> bool:
        """Whether the view was asked for (and made)."""
        return self._view is not None

    def renumber(self, whole: Callable[[int], int]) -> None:
        """Places in a part's file made places in the whole trace (partial.renumber)."""
        self.rank_key = (whole(self.rank_key[0]), whole(self.rank_key[1]))
        if self._view is not None:
            self._view.order, self._view.pos = self.rank_key

    def shippable(self) -> DeferredView:
        """The view made, without the records (they hold file readers that cannot leave the process)."""
        self.view.records = None
        return self


@record
class KeptRows:
    """Some pairs of a round, owned (PairTable.take_owned), for the DeferredViews made from them."""

    table: PairTable
    grades: Grades
    order: np.ndarray  # each pair's execution order
    tolerances: Tolerances

    @staticmethod
    def of(t: PairTable, g: Grades, rows: np.ndarray, order: np.ndarray, tolerances: Tolerances) -> list[DeferredView]:
        """Deferred views of the pairs `rows` of a round."""
        if not len(rows):
            return []
        kept = KeptRows(t.take_owned(rows), g.take(rows), order[rows], tolerances)
        return [DeferredView(kept, k) for k in range(len(rows))]


def _interesting(partial: list[tuple[str, list[float], list[float]]], k: int) -> dict[str, tuple[float, float]]:
    """The intervals of pair k that say something: neither a point nor the whole range."""
    return {m: (lo[k], hi[k]) for m, lo, hi in partial if lo[k] != hi[k] and (lo[k], hi[k]) != bounds.UNKNOWN[m]}


def _own_keys(batch: RecordBatch, idx: np.ndarray) -> list[dict[str, Any]]:
    """Each record's key fields as its emitter wrote them: the name before any map, and layer and stage
    only when no map touched the record (a map may have filled them)."""
    assert batch.renamed_from is not None, "RecordBatch.__post_init__ fills it"
    names, renamed = batch.checkpoint[idx].tolist(), batch.renamed_from[idx].tolist()
    layer, stage = batch.layer[idx].tolist(), batch.stage[idx].tolist()
    cols = {f: getattr(batch, f)[idx].tolist() for f in ("token_idx", "step", "rank")}
    out = []
    for k in range(len(idx)):
        mapped = renamed[k] is not None
        out.append(
            {
                "checkpoint": renamed[k] if mapped else names[k],
                "layer": None if mapped else _opt(layer[k]),
                "stage": None if mapped else stage[k],
                "token_idx": _opt(cols["token_idx"][k]),
                "step": _opt(cols["step"][k]),
                "rank": cols["rank"][k],
            }
        )
    return out
