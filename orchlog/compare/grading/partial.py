"""A partial report: what a compare found over part of the inputs, merged associatively with others.

`compare` is a walk (`walk`: every pair of two traces measured and graded,
folded into a PartialReport) and a finish (`finish`: the verdict, coverage,
diagnosis and the CompareReport). A partitioned compare walks parts of the
traces (the records of some ranks, say; orchlog.scale) and merges the parts
before the one finish. The parts must not share an alignment key, so that
every pair falls in exactly one part; then, since Findings keeps a function
of the set of pairs it saw (see orchlog/compare/grading/divergence.py) and every
list here is put in one canonical order, the merged report is byte for byte
the report one process writes.

Places in a trace (`order`) are numbered per file in a part:
`file_index << ORDER_BITS | place in the file`, which sorts as the whole
trace's numbering does; `finish` turns them into the whole trace's numbers
once every file's length is known.
"""

from __future__ import annotations

import dataclasses
import heapq
from typing import Any

import numpy as np

from orchlog.compare.grading.coverage import Unmatched
from orchlog.compare.grading.divergence import Findings, TokenState, Tracked, by_rank, by_severity
from orchlog.compare.grading.growth import Growth
from orchlog.compare.grading.noise import NoiseTable
from orchlog.compare.pairing.tokens import TokenIds
from orchlog.compare.pairview import DeferredView, PairView
from orchlog.diagnose.keeper import Keeper
from orchlog.read.trace import Diagnostic
from orchlog.records import record

ORDER_BITS = 40
SIDES = ("a", "b")


@record
class FileTally:
    """One file a part read: its place among the side's files, the records read, those the part kept."""

    path: str
    rows: int = 0
    kept: int = 0
    header: dict[str, Any] | None = None


@record
class SideState:
    rows_in: int = 0
    tokens: TokenIds = dataclasses.field(default_factory=TokenIds)
    unmatched: list[tuple[int, Unmatched]] = dataclasses.field(default_factory=list)  # (order, record)
    held_out: list[tuple[int, Unmatched]] = dataclasses.field(default_factory=list)
    diagnostics: list[Diagnostic] = dataclasses.field(default_factory=list)  # the readers'
    side_diagnostics: list[Diagnostic] = dataclasses.field(default_factory=list)  # maps, views, shards
    extent: dict[int | None, int] | None = None  # diagnose.Extent's table
    files: dict[int, FileTally] = dataclasses.field(default_factory=dict)  # by file index; {} for a whole trace
    sharded: bool = False  # a record said it is a tensor-parallel piece (gathered across ranks)


@record
class PartialReport:
    findings: Findings
    sides: tuple[SideState, SideState]
    dumped: list[str] = dataclasses.field(default_factory=list)  # files --dump-all wrote
    # Three-way: the second references' noise tables (one process only; the diagnosis reads them).
    noise: list[NoiseTable] = dataclasses.field(default_factory=list)
    # The records the walk kept for the diagnosis (one process only: parts leave theirs behind).
    kept: Keeper | None = None

    @property
    def encoded(self) -> bool:
        """Whether places are numbered per file (a part of a partitioned compare)."""
        return bool(self.sides[0].files or self.sides[1].files)

    def merge(self, other: PartialReport) -> PartialReport:
        """The partial report of both parts' inputs together (associative and commutative)."""
        return PartialReport(
            _merge_findings(self.findings, other.findings),
            (_merge_side(self.sides[0], other.sides[0]), _merge_side(self.sides[1], other.sides[1])),
            sorted(self.dumped + other.dumped),
        )

    def shippable(self) -> PartialReport:
        """The same report without what cannot leave the process (records with their file readers)."""
        for v in _views(self.findings):
            v.records = None
        for state in self.findings.tokens.values():
            for deferred in (state.suspect_at, state.fail_at):
                if deferred is not None:
                    deferred.shippable()
        self.kept = None
        return self


def merge_all(parts: list[PartialReport]) -> PartialReport:
    """Merge parts pairwise, as a tree (any grouping gives the same report)."""
    if not parts:
        raise ValueError("nothing to merge")
    while len(parts) > 1:
        parts = [parts[k].merge(parts[k + 1]) if k + 1 < len(parts) else parts[k] for k in range(0, len(parts), 2)]
    return parts[0]


def _views(f: Findings) -> list[PairView]:
    out = [*f.worst, *f.undecided_examples, *(v for _, _, v in f._kept)]
    out += [v for vs in f.mismatch_examples.values() for v in vs]
    return out


# ------------------------------------------------------------------ findings


def _merge_findings(x: Findings, y: Findings) -> Findings:
    out = Findings(x.tolerances, top_n=x.top_n, keep=x.keep, detail=x.detail, heat=x.heat is not None)
    out.pairs = x.pairs + y.pairs
    out.noise_pairs = x.noise_pairs + y.noise_pairs
    out.counts = x.counts + y.counts
    out.bases = x.bases + y.bases
    for kind in out.mismatch_counts:
        out.mismatch_counts[kind] = x.mismatch_counts[kind] + y.mismatch_counts[kind]
        out.mismatch_examples[kind] = by_rank(x.mismatch_examples[kind] + y.mismatch_examples[kind])[:5]
    out.undecided_examples = by_rank(x.undecided_examples + y.undecided_examples)[:5]
    out.worst = by_severity(x.worst + y.worst)[: x.top_n]
    for f in (x, y):
        for tok, s in f.tokens.items():
            mine = out.tokens.get(tok)
            out.tokens[tok] = dataclasses.replace(s) if mine is None else _merge_token(mine, s)
    out.growth_rows = merge_growth(x.growth_rows, y.growth_rows)
    if x.heat is not None and y.heat is not None:
        out.heat = merge_growth(x.heat, y.heat)
    if x.stages is not None and y.stages is not None:
        out.stages = merge_growth(x.stages, y.stages)
    if x.token_steps is not None and y.token_steps is not None:
        out.token_steps = dict(x.token_steps)
        for tok, step in y.token_steps.items():
            out.token_steps[tok] = min(step, out.token_steps.get(tok, step))
    out._tracked = x._tracked + y._tracked
    out._candidates = x._candidates + y._candidates
    for _, _, v in x._kept + y._kept:
        out.keep_view(v)
    cutoffs = [c for c in (x._cutoff, y._cutoff) if c is not None]
    cutoffs += [tok for tok, s in out.tokens.items() if s.logits_suspect or s.noise_fail]
    out.prune(min(cutoffs) if cutoffs else None)
    return out


def _merge_token(s: TokenState, t: TokenState) -> TokenState:
    def earliest(u: DeferredView | None, v: DeferredView | None) -> DeferredView | None:
        return v if u is None or (v is not None and v.rank_key < u.rank_key) else u

    out = dataclasses.replace(s)
    out.suspect_at = earliest(s.suspect_at, t.suspect_at)
    out.fail_at = earliest(s.fail_at, t.fail_at)
    out.logits_seen = s.logits_seen or t.logits_seen
    out.logits_suspect = s.logits_suspect or t.logits_suspect
    out.noise_fail = s.noise_fail or t.noise_fail
    if (t.last_order, t.last_pos) > (s.last_order, s.last_pos):
        out.last_order, out.last_pos, out.last_suspect = t.last_order, t.last_pos, t.last_suspect
    return out


def merge_growth(x: Growth, y: Growth) -> Growth:
    """One table with the rows of both (names renumbered into the first's)."""
    out = Growth(by_stage=x.by_stage)
    for g in (x, y):
        rows = {f: col.copy() for f, col in g.rows.items()}
        names = list(g._names)
        ids = np.array([out._names.setdefault(n, len(out._names)) for n in names], dtype=np.int64)
        if len(rows["token"]):
            rows["worst_name"] = ids[rows["worst_name"]]
            rows["label"] = g.renamed_labels(rows["label"], ids)
            out._merge(rows)
    return out


# ------------------------------------------------------------------ sides


def _merge_side(x: SideState, y: SideState) -> SideState:
    out = SideState(rows_in=x.rows_in + y.rows_in, sharded=x.sharded or y.sharded)
    out.tokens = _merge_tokens(x.tokens, y.tokens)
    out.unmatched = sorted(x.unmatched + y.unmatched, key=lambda u: u[0])
    out.held_out = sorted(x.held_out + y.held_out, key=lambda u: u[0])
    out.files = dict(x.files)
    for index, tally in y.files.items():
        mine = out.files.get(index)
        if mine is None:
            out.files[index] = dataclasses.replace(tally)
        else:  # a file two parts read, each keeping its own ranks' records
            out.files[index] = dataclasses.replace(mine, kept=mine.kept + tally.kept)
    place = {t.path: index for index, t in out.files.items()}

    def by_file(ds: list[Diagnostic]) -> list[Diagnostic]:
        return sorted(ds, key=lambda d: place.get(d.location.path, -1))

    # A file two parts read reports its problems in both: once is enough.
    shared = {t.path for index, t in y.files.items() if index in x.files}
    out.diagnostics = by_file(x.diagnostics + [d for d in y.diagnostics if d.location.path not in shared])
    out.side_diagnostics = by_file(x.side_diagnostics + y.side_diagnostics)
    if x.extent is not None and y.extent is not None:
        out.extent = dict(x.extent)
        for tok, last in y.extent.items():
            out.extent[tok] = max(last, out.extent.get(tok, -1))
    return out


def _merge_tokens(x: TokenIds, y: TokenIds) -> TokenIds:
    out = TokenIds()
    out.ids = dict(x.ids)
    out.conflicts = list(x.conflicts)
    for position, value in y.ids.items():
        known = out.ids.setdefault(position, value)
        if known != value and len(out.conflicts) < 10:
            out.conflicts.append((position, known, value))
    return out


# ------------------------------------------------------------------ places


def renumber(partial: PartialReport) -> None:
    """Turn per-file places into the whole trace's (a no-op for a whole trace's walk)."""
    maps = []
    for side in partial.sides:
        starts: dict[int, int] = {}
        total = 0
        for index in sorted(side.files):
            starts[index] = total
            total += side.files[index].rows
        maps.append(starts)

    def whole(side: int, v: int) -> int:
        if v < (1 << ORDER_BITS) or not maps[side]:
            return v  # an emitter's counter, or a place already whole
        return maps[side][v >> ORDER_BITS] + (v & ((1 << ORDER_BITS) - 1))

    f = partial.findings
    for v in _views(f):
        v.order, v.pos = whole(0, v.order), whole(0, v.pos)
    f._tracked = [(whole(0, o), whole(0, p), t) for o, p, t in f._tracked]
    f._kept = [(-whole(0, -o), -whole(0, -p), v) for o, p, v in f._kept]
    heapq.heapify(f._kept)
    for s in f.tokens.values():
        s.last_order, s.last_pos = whole(0, s.last_order), whole(0, s.last_pos)
        for deferred in (s.suspect_at, s.fail_at):
            if deferred is not None:  # one pair may be both: whole() leaves a place already whole as it is
                deferred.renumber(lambda v: whole(0, v))
    for table in (f.growth_rows, f.heat, f.stages):
        if table is not None:
            for col in ("first_order", "worst_order", "worst_pos"):
                # A new column, not an assignment into the old one: a partial report that came back from
                # Ray's object store holds read-only arrays.
                c = np.array(table._cols[col])
                split = np.flatnonzero(c[: table._n] >= 1 << ORDER_BITS)  # none in a whole trace's walk
                c[split] = [whole(0, int(v)) for v in c[split].tolist()]
                table._cols[col] = c
    for k, side in enumerate(partial.sides):
        side.unmatched = [(whole(k, o), u) for o, u in side.unmatched]
        side.held_out = [(whole(k, o), u) for o, u in side.held_out]
        if side.extent is not None:
            side.extent = {tok: whole(k, last) for tok, last in side.extent.items()}


__all__ = ["FileTally", "PartialReport", "SideState", "Tracked", "merge_all", "merge_growth", "renumber"]
