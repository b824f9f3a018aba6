"""What the walk over all pairs has found: counts, worst offenders, and where the divergence starts.

Findings is fed one round of graded pairs at a time and keeps only what the
report needs, so its size follows the number of tokens and layers, not the
number of records:
  - counts per tier and per basis, and examples of dtype/shape/size mismatches;
  - the worst N pairs by severity (among pairs that differ at all);
  - per token: the earliest pair not proven within tolerance (failing or
    undecided) and the earliest failing one, in execution order; whether the
    token's logits (or, without logits, its last record) fail or are
    undecided; and per layer the worst error, for the growth table;
  - up to `keep` failing or undecided pairs (every pair with `detail`) for
    the pair list.
A pair that is undecided may be the divergence, so it counts as one until
decided: the first diverging token is the first whose logits (else last
record) fail or are undecided; when none is but some pair is, the first
token with such a pair. The first divergence is that token's earliest such
pair, and the report says whether it fails or is undecided.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable

import numpy as np

from orchlog.compare.grading import FAIL, TIER_NAMES, UNDECIDED_TIER, Grades
from orchlog.compare.growth import Growth, GrowthRow, run_starts
from orchlog.compare.metrics import BASES, PairTable
from orchlog.compare.pairview import PairView, exec_order, make_views
from orchlog.compare.tolerances import Tolerances
from orchlog.read.batch import NONE

EXAMPLES = 5


@dataclasses.dataclass
class _TokenState:
    first_suspect: PairView | None = None  # the earliest pair failing or undecided
    first_fail: PairView | None = None  # the earliest failing pair
    logits_seen: bool = False
    logits_suspect: bool = False
    last_order: int = -1
    last_suspect: bool = False

    @property
    def decided_suspect(self) -> bool:
        """Whether the token's logits (else its last record) fail or are undecided."""
        return self.logits_suspect if self.logits_seen else self.last_suspect


@dataclasses.dataclass
class Tracked:
    token_idx: int | None
    checkpoint: str
    rank_a: int
    rank_b: int


class Findings:
    def __init__(
        self, tolerances: Tolerances, top_n: int = 10, keep: int | None = 1000, detail: bool = False, heat: bool = False
    ) -> None:
        self.tolerances = tolerances
        self.top_n = top_n
        self.keep = keep
        self.detail = detail
        self.counts = np.zeros(len(TIER_NAMES), dtype=np.int64)
        self.bases = np.zeros(len(BASES), dtype=np.int64)
        self.pairs = 0
        self.mismatch_counts = {"dtype": 0, "shape": 0, "numel": 0}
        self.mismatch_examples: dict[str, list[PairView]] = {k: [] for k in self.mismatch_counts}
        self.undecided_examples: list[PairView] = []
        self.worst: list[PairView] = []
        self.tokens: dict[int, _TokenState] = {}
        self.growth_rows = Growth()
        # The worst error per token and layer for every token, never pruned: the HTML
        # report's heatmap. Its size follows tokens x layers, so it is kept only on request.
        self.heat = Growth() if heat else None
        # For the HTML report's per-stage chart of the diverging layer: every checkpoint of the tokens in play.
        self.stages = Growth(by_stage=True) if heat else None
        # Each token's earliest step, so that the heatmap can mark where prefill ends and decode begins.
        self.token_steps: dict[int, int] | None = {} if heat else None
        self._cutoff: int | None = None  # the first token known to diverge: later tokens no longer matter
        self.tracked: list[Tracked] = []
        self._kept: list[tuple[int, int, PairView]] = []  # max-heap on order: (-order, tie, view)
        self._tie = 0
        self.kept_dropped = 0

    # ------------------------------------------------------------ feeding

    def add(self, t: PairTable, g: Grades) -> None:
        n = len(t)
        if not n:
            return
        order = exec_order(t)
        self.pairs += n
        self.counts += np.bincount(g.tier, minlength=len(TIER_NAMES))
        self.bases += np.bincount(t.basis, minlength=len(BASES))

        def views(rows: np.ndarray, keep: bool = False) -> list[PairView]:
            return make_views(t, g, rows, self.tolerances, order, keep)

        for kind, flags in (("dtype", t.dtype_mismatch), ("shape", t.shape_mismatch), ("numel", t.numel_mismatch)):
            hits = np.flatnonzero(flags)
            self.mismatch_counts[kind] += len(hits)
            room = EXAMPLES - len(self.mismatch_examples[kind])
            self.mismatch_examples[kind].extend(views(hits[: max(room, 0)]))
        room = EXAMPLES - len(self.undecided_examples)
        if room > 0:
            self.undecided_examples.extend(views(np.flatnonzero(g.tier == UNDECIDED_TIER)[:room]))
        self._add_worst(g, views)
        self._add_tokens(t, g, order, views)
        self._add_kept(g, order, views)
        self._add_tracked(t)
        self._prune(set(np.unique(t.a.token_idx[t.ia]).tolist()))

    def _prune(self, seen_now: set[int]) -> None:
        """Forget what can no longer matter, so memory follows the tokens still in play.

        Once some token's logits (or last record) fail or are undecided, no later
        token can be the first divergence. A token with no such pair that this
        round did not touch is done; its growth rows are only ever shown for a
        diverging token.
        """
        decided = [tok for tok, s in self.tokens.items() if s.decided_suspect]
        self._cutoff = cutoff = min(decided) if decided else None
        for tok in list(self.tokens):
            if cutoff is not None and tok > cutoff:
                del self.tokens[tok]
        in_play = [tok for tok, s in self.tokens.items() if s.first_suspect is not None or tok in seen_now]
        self.growth_rows.keep(np.array(in_play, dtype=np.int64))
        if self.stages is not None:
            # Only the diverging token's stages are drawn: it is the first decided token, else the first with
            # a suspect pair; a token this round touched may still become one of those. A token whose records
            # are contiguous (as an engine writes them) is touched by every round that holds them, so none of
            # its rows is forgotten; memory follows the rounds, not the trace.
            first_suspect = min((tok for tok, st in self.tokens.items() if st.first_suspect is not None), default=None)
            candidates = {t for t in (cutoff, first_suspect) if t is not None} | seen_now
            self.stages.keep(np.array(sorted(candidates), dtype=np.int64))

    def _add_worst(self, g: Grades, views: Callable[..., list[PairView]]) -> None:
        sev = np.where(np.isnan(g.severity), -np.inf, g.severity)
        if self.worst and len(self.worst) >= self.top_n:
            floor = self.worst[-1].severity
            candidates = np.flatnonzero(sev > floor)
        else:
            candidates = np.arange(len(sev))
        if len(candidates) > self.top_n:
            candidates = candidates[np.argpartition(-sev[candidates], self.top_n)[: self.top_n]]
        merged = self.worst + views(candidates[sev[candidates] > 0])  # pairs that differ at all
        merged.sort(key=lambda v: (-v.severity, v.order))
        self.worst = merged[: self.top_n]

    def _add_tokens(self, t: PairTable, g: Grades, order: np.ndarray, views: Callable[..., list[PairView]]) -> None:
        tokens = t.a.token_idx[t.ia]
        failed, suspect = g.failed, g.suspect
        for flags, field in ((suspect, "first_suspect"), (failed, "first_fail")):
            # The earliest such pair per token.
            rows = np.flatnonzero(flags)
            if not len(rows):
                continue
            rows = rows[np.lexsort((order[rows], tokens[rows]))]
            firsts = [
                p
                for p in rows[run_starts(tokens[rows])]
                if self._earlier(field, int(tokens[p]), int(order[p]))
                and (self._cutoff is None or tokens[p] <= self._cutoff)
            ]
            for v in views(np.array(firsts, dtype=np.int64), True):
                setattr(self.tokens.setdefault(-1 if v.token_idx is None else v.token_idx, _TokenState()), field, v)
        # The deciding record per token: its logits, else its last record.
        by_token = np.lexsort((order, tokens))
        starts = run_starts(tokens[by_token])
        ends = np.r_[starts[1:], len(by_token)] - 1
        logits_seen = np.add.reduceat(t.is_logits[by_token].astype(np.int64), starts) > 0
        logits_suspect = np.add.reduceat((t.is_logits & suspect)[by_token].astype(np.int64), starts) > 0
        for k, (s, e) in enumerate(zip(starts, ends)):
            tok, last = int(tokens[by_token[s]]), by_token[e]
            state = self.tokens.setdefault(tok, _TokenState())
            state.logits_seen |= bool(logits_seen[k])
            state.logits_suspect |= bool(logits_suspect[k])
            if order[last] > state.last_order:
                state.last_order, state.last_suspect = int(order[last]), bool(suspect[last])
        if self.token_steps is not None:
            self._add_steps(tokens, t.a.step[t.ia])
        for table in (self.growth_rows, self.heat, self.stages):
            if table is not None:
                table.add(
                    tokens,
                    t.a.layer[t.ia],
                    t.a.checkpoint[t.ia],
                    order,
                    failed,
                    t.m["max_abs"],
                    t.m["cosine"],
                    g.severity,
                    g.tier,
                )

    def _add_steps(self, tokens: np.ndarray, steps: np.ndarray) -> None:
        has = steps != NONE
        if not has.any() or self.token_steps is None:
            return
        uniq, inv = np.unique(tokens[has], return_inverse=True)
        first = np.full(len(uniq), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, inv, steps[has].astype(np.int64))
        for tok, step in zip(uniq.tolist(), first.tolist()):
            known = self.token_steps.get(tok)
            self.token_steps[tok] = step if known is None else min(known, step)

    def _earlier(self, field: str, token: int, order: int) -> bool:
        """Whether a pair at `order` comes before the token's earliest one of its kind known so far."""
        state = self.tokens.get(token)
        known = None if state is None else getattr(state, field)
        return known is None or order < known.order

    def _add_kept(self, g: Grades, order: np.ndarray, views: Callable[..., list[PairView]]) -> None:
        rows = np.arange(len(order)) if self.detail else np.flatnonzero(g.suspect)
        if self.keep is not None:
            if len(self._kept) >= self.keep and len(rows):
                newest_kept = -self._kept[0][0]
                rows = rows[order[rows] < newest_kept]
            if len(rows) > self.keep:
                self.kept_dropped += len(rows) - self.keep
                rows = rows[np.argpartition(order[rows], self.keep)[: self.keep]]
        for v in views(rows):
            self._tie += 1
            heapq.heappush(self._kept, (-v.order, self._tie, v))
            if self.keep is not None and len(self._kept) > self.keep:
                heapq.heappop(self._kept)
                self.kept_dropped += 1

    def take_failing_views(self, t: PairTable, g: Grades) -> list[PairView]:
        """Views (with records, for dumping) of every failing pair of a round."""
        order = exec_order(t)
        return make_views(t, g, np.flatnonzero(g.tier == FAIL), self.tolerances, order, True)

    def _add_tracked(self, t: PairTable) -> None:
        for p in np.flatnonzero(~np.isnan(t.m["rank_a"])):
            self.tracked.append(
                Tracked(
                    None if t.a.token_idx[t.ia[p]] == NONE else int(t.a.token_idx[t.ia[p]]),
                    t.a.checkpoint[t.ia[p]],
                    int(t.m["rank_a"][p]),
                    int(t.m["rank_b"][p]),
                )
            )

    # ------------------------------------------------------------ results

    @property
    def failed(self) -> int:
        return int(self.counts[FAIL])

    @property
    def undecided(self) -> int:
        return int(self.counts[UNDECIDED_TIER])

    def kept_pairs(self) -> list[PairView]:
        return sorted((v for _, _, v in self._kept), key=lambda v: v.order)

    def diverging_token(self) -> int | None:
        """The token (NONE for records without a token) where the divergence starts, or None."""
        if not (self.failed or self.undecided):
            return None
        ordered = sorted(self.tokens)  # NONE (-1) first: whole-sequence records come before any token
        decided = [tok for tok in ordered if self.tokens[tok].decided_suspect]
        if decided:
            return decided[0]
        return next(tok for tok in ordered if self.tokens[tok].first_suspect is not None)

    def first_divergence(self) -> PairView | None:
        tok = self.diverging_token()
        return None if tok is None else self.tokens[tok].first_suspect

    def first_failure(self) -> PairView | None:
        """The earliest failing pair at the diverging token, else at the first token (still known) with one."""
        tok = self.diverging_token()
        if tok is not None and self.tokens[tok].first_fail is not None:
            return self.tokens[tok].first_fail
        return next((self.tokens[k].first_fail for k in sorted(self.tokens) if self.tokens[k].first_fail), None)

    def growth(self, token: int) -> list[GrowthRow]:
        return self.growth_rows.table(token)
