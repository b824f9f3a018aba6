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
record) fail or are undecided, or one of whose pairs fails beyond the noise
a second reference measured (three-way grading: the stage left its natural
noise, whether or not the logits show it yet); when none is but some pair
is, the first token with such a pair. The first divergence is that token's earliest such
pair, and the report says whether it fails or is undecided.

Every choice follows one total order over pairs, `PairView.rank_key`
(execution order, then the reference record's place in its trace), never
the order in which pairs arrive, and nothing is forgotten on evidence that
a later record could overturn: what Findings holds is a function of the set
of pairs it was fed, so Findings over parts of a trace merge into the
Findings of the whole (orchlog/compare/grading/partial.py).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

from orchlog.compare.grading.growth import Growth, GrowthRow, run_starts
from orchlog.compare.grading.tiers import FAIL, TIER_NAMES, UNDECIDED_TIER, Grades
from orchlog.compare.measuring.bounds import estimate
from orchlog.compare.measuring.metrics import BASES, PairTable
from orchlog.compare.pairview import DeferredView, KeptRows, PairView, exec_order, make_views
from orchlog.read.batch import NONE
from orchlog.records import record
from orchlog.tolerances.rules import Tolerances

EXAMPLES = 5


@record
class TokenState:
    suspect_at: DeferredView | None = None  # the earliest pair failing or undecided
    fail_at: DeferredView | None = None  # the earliest failing pair
    logits_seen: bool = False
    logits_suspect: bool = False
    last_order: int = -1
    last_pos: int = -1
    last_suspect: bool = False
    noise_fail: bool = False  # a pair of the token fails beyond the noise a second reference measured

    @property
    def first_suspect(self) -> PairView | None:
        return None if self.suspect_at is None else self.suspect_at.view

    @property
    def first_fail(self) -> PairView | None:
        return None if self.fail_at is None else self.fail_at.view

    @property
    def decided_suspect(self) -> bool:
        """Whether the token's logits (else its last record) fail or are undecided, or a pair of it is proven
        beyond the noise: a stage that leaves its natural noise diverges, whether or not its logits show it yet."""
        return (self.logits_suspect if self.logits_seen else self.last_suspect) or self.noise_fail


def by_rank(views: list[PairView]) -> list[PairView]:
    return sorted(views, key=lambda v: v.rank_key)


def by_severity(views: list[PairView]) -> list[PairView]:
    """Worst first; of equally bad pairs, the earliest."""
    return sorted(views, key=lambda v: (-v.severity, v.order, v.pos))


@record
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
        self.noise_pairs = 0  # pairs graded against a second reference's noise (three-way)
        self.mismatch_counts = {"dtype": 0, "shape": 0, "numel": 0}
        self.mismatch_examples: dict[str, list[PairView]] = {k: [] for k in self.mismatch_counts}
        self.undecided_examples: list[PairView] = []
        self.worst: list[PairView] = []
        self.tokens: dict[int, TokenState] = {}
        self.growth_rows = Growth()
        # The worst error per token and layer for every token, never pruned: the HTML
        # report's heatmap. Its size follows tokens x layers, so it is kept only on request.
        self.heat = Growth() if heat else None
        # The HTML report's per-stage chart of the diverging layer: every checkpoint's own row, for the tokens
        # that can still be the diverging one (pruned as the growth rows are). Its size follows the records of
        # those tokens, so, like the heatmap, it is kept only on request.
        self.stages = Growth(by_stage=True) if heat else None
        # Each token's earliest step, so that the heatmap can mark where prefill ends and decode begins.
        self.token_steps: dict[int, int] | None = {} if heat else None
        self._cutoff: int | None = None  # the first token known to diverge: later tokens no longer matter
        self._tracked: list[tuple[int, int, Tracked]] = []  # (order, pos, position)
        self._kept: list[tuple[int, int, PairView]] = []  # max-heap on rank_key: (-order, -pos, view)
        self._candidates = 0  # pairs that would be listed if `keep` allowed

    # ------------------------------------------------------------ feeding

    def add(self, t: PairTable, g: Grades) -> None:
        n = len(t)
        if not n:
            return
        order = exec_order(t)
        pos = t.a.order[t.ia]
        self.pairs += n
        self.noise_pairs += int(np.count_nonzero(~np.isnan(g.noise)))
        self.counts += np.bincount(g.tier, minlength=len(TIER_NAMES))
        self.bases += np.bincount(t.basis, minlength=len(BASES))

        def views(rows: np.ndarray, keep: bool = False) -> list[PairView]:
            return make_views(t, g, rows, self.tolerances, order, keep)

        def deferred(rows: np.ndarray) -> list[DeferredView]:
            return KeptRows.of(t, g, rows, order, self.tolerances)

        for kind, flags in (("dtype", t.dtype_mismatch), ("shape", t.shape_mismatch), ("numel", t.numel_mismatch)):
            hits = np.flatnonzero(flags)
            self.mismatch_counts[kind] += len(hits)
            self.mismatch_examples[kind] = _earliest(self.mismatch_examples[kind], hits, order, pos, views)
        self.undecided_examples = _earliest(
            self.undecided_examples, np.flatnonzero(g.tier == UNDECIDED_TIER), order, pos, views
        )
        self._add_worst(g, order, pos, views)
        self._add_heat(t, g, order, pos)
        self._add_tokens(t, g, order, pos, deferred)
        self._add_kept(g, order, pos, views)
        self._add_tracked(t, order, pos)

    def prune(self, cutoff: int | None) -> None:
        """Forget every token after `cutoff` (a token whose logits fail or are undecided): the divergence
        cannot be later, and a logits verdict only ever grows worse as records arrive, so nothing
        later can undo it. (A token whose last record so far is suspect is no such bound: a later
        record of it may pass.)"""
        if cutoff is None or (self._cutoff is not None and cutoff >= self._cutoff):
            return
        self._cutoff = cutoff
        for tok in [tok for tok in self.tokens if tok > cutoff]:
            del self.tokens[tok]
        self.growth_rows.drop_after(cutoff)
        if self.stages is not None:
            self.stages.drop_after(cutoff)

    def _add_worst(self, g: Grades, order: np.ndarray, pos: np.ndarray, views: Callable[..., list[PairView]]) -> None:
        sev = np.where(np.isnan(g.severity), -np.inf, g.severity)
        if self.worst and len(self.worst) >= self.top_n:
            # Only pairs that would displace the last listed one, in by_severity's order: most rounds have
            # none, and then no views are made at all.
            last = self.worst[-1]
            earlier = (order < last.order) | ((order == last.order) & (pos < last.pos))
            ahead = (sev > last.severity) | ((sev == last.severity) & earlier)
            candidates = np.flatnonzero(ahead)
        else:
            candidates = np.arange(len(sev))
        candidates = candidates[sev[candidates] > 0]  # pairs that differ at all
        if not len(candidates):
            return
        if len(candidates) > self.top_n:
            best = np.lexsort((pos[candidates], order[candidates], -sev[candidates]))
            candidates = candidates[best[: self.top_n]]
        self.worst = by_severity(self.worst + views(candidates))[: self.top_n]

    def _add_tokens(
        self, t: PairTable, g: Grades, order: np.ndarray, pos: np.ndarray, deferred: Callable[..., list[DeferredView]]
    ) -> None:
        tokens = t.a.token_idx[t.ia]
        if self._cutoff is not None:  # later tokens no longer matter
            rows = np.flatnonzero(tokens <= self._cutoff)
            if not len(rows):
                return
            tokens, order, pos = tokens[rows], order[rows], pos[rows]
        else:
            rows = np.arange(len(tokens))
        failed, suspect = g.failed[rows], g.suspect[rows]
        by_token = np.lexsort((pos, order, tokens))
        starts = run_starts(tokens[by_token])
        firsts: dict[str, list[int]] = {}
        for flags, field in ((suspect, "suspect_at"), (failed, "fail_at")):
            # The earliest such pair per token.
            hit = by_token[flags[by_token]]
            firsts[field] = [
                p
                for p in hit[run_starts(tokens[hit])].tolist()
                if self._earlier(field, int(tokens[p]), (int(order[p]), int(pos[p])))
            ]
        # A token's first failure is most often its first suspect pair too: one kept row serves both.
        needed = sorted(set(firsts["suspect_at"]) | set(firsts["fail_at"]))
        if needed:
            made = dict(zip(needed, deferred(rows[np.array(needed, dtype=np.int64)])))
            for field, picked in firsts.items():
                for p in picked:
                    setattr(self.tokens.setdefault(int(tokens[p]), TokenState()), field, made[p])
        # The deciding record per token: its logits, else its last record.
        ends = np.r_[starts[1:], len(by_token)] - 1
        is_logits = t.is_logits[rows]
        logits_seen = np.add.reduceat(is_logits[by_token].astype(np.int64), starts) > 0
        logits_suspect = np.add.reduceat((is_logits & suspect)[by_token].astype(np.int64), starts) > 0
        noise_fail = np.add.reduceat(g.beyond_noise[rows][by_token].astype(np.int64), starts) > 0
        cutoff = None
        for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
            tok, last = int(tokens[by_token[s]]), by_token[e]
            state = self.tokens.setdefault(tok, TokenState())
            state.logits_seen |= bool(logits_seen[k])
            state.logits_suspect |= bool(logits_suspect[k])
            state.noise_fail |= bool(noise_fail[k])
            if (int(order[last]), int(pos[last])) > (state.last_order, state.last_pos):
                state.last_order, state.last_pos, state.last_suspect = (
                    int(order[last]),
                    int(pos[last]),
                    bool(suspect[last]),
                )
            if (state.logits_suspect or state.noise_fail) and cutoff is None:
                cutoff = tok
        columns = (
            t.a.layer[t.ia][rows],
            t.a.checkpoint[t.ia][rows],
            order,
            pos,
            failed,
            t.m["max_abs"][rows],
            t.m["cosine"][rows],
            g.severity[rows],
            g.tier[rows],
            estimate(g.ratio_lo[rows], g.ratio_hi[rows]),
        )
        self.growth_rows.add(tokens, *columns)
        if self.stages is not None:
            self.stages.add(tokens, *columns)
        self.prune(cutoff)

    def _add_heat(self, t: PairTable, g: Grades, order: np.ndarray, pos: np.ndarray) -> None:
        """The heatmap's rows and the tokens' steps: every token of every round, whatever the cutoff."""
        tokens = t.a.token_idx[t.ia]
        if self.token_steps is not None:
            add_steps(self.token_steps, tokens, t.a.step[t.ia])
        if self.heat is not None:
            self.heat.add(
                tokens,
                t.a.layer[t.ia],
                t.a.checkpoint[t.ia],
                order,
                pos,
                g.failed,
                t.m["max_abs"],
                t.m["cosine"],
                g.severity,
                g.tier,
                estimate(g.ratio_lo, g.ratio_hi),
            )

    def _earlier(self, field: str, token: int, key: tuple[int, int]) -> bool:
        """Whether a pair at `key` comes before the token's earliest one of its kind known so far."""
        state = self.tokens.get(token)
        known = None if state is None else getattr(state, field)
        return known is None or key < known.rank_key

    def _add_kept(self, g: Grades, order: np.ndarray, pos: np.ndarray, views: Callable[..., list[PairView]]) -> None:
        rows = np.arange(len(order)) if self.detail else np.flatnonzero(g.suspect)
        self._candidates += len(rows)
        if self.keep == 0:  # a report that lists no pairs: not a view made
            return
        if self.keep is not None:
            if len(self._kept) >= self.keep and len(rows):
                newest = (-self._kept[0][0], -self._kept[0][1])
                rows = rows[(order[rows] < newest[0]) | ((order[rows] == newest[0]) & (pos[rows] < newest[1]))]
            if len(rows) > self.keep:
                rows = rows[np.lexsort((pos[rows], order[rows]))[: self.keep]]
        for v in views(rows):
            self.keep_view(v)

    def keep_view(self, v: PairView) -> None:
        """List a pair, if it is among the `keep` earliest listed."""
        heapq.heappush(self._kept, (-v.order, -v.pos, v))
        if self.keep is not None and len(self._kept) > self.keep:
            heapq.heappop(self._kept)

    def take_failing_views(self, t: PairTable, g: Grades) -> list[PairView]:
        """Views (with records, for dumping) of every failing pair of a round."""
        order = exec_order(t)
        return make_views(t, g, np.flatnonzero(g.tier == FAIL), self.tolerances, order, True)

    def _add_tracked(self, t: PairTable, order: np.ndarray, pos: np.ndarray) -> None:
        for p in np.flatnonzero(~np.isnan(t.m["rank_a"])):
            self._tracked.append(
                (
                    int(order[p]),
                    int(pos[p]),
                    Tracked(
                        None if t.a.token_idx[t.ia[p]] == NONE else int(t.a.token_idx[t.ia[p]]),
                        t.a.checkpoint[t.ia[p]],
                        int(t.m["rank_a"][p]),
                        int(t.m["rank_b"][p]),
                    ),
                )
            )

    # ------------------------------------------------------------ results

    @property
    def tracked(self) -> list[Tracked]:
        """The tracked token's rank at every logits pair, in execution order."""
        return [t for _, _, t in sorted(self._tracked, key=lambda x: x[:2])]

    @property
    def kept_dropped(self) -> int:
        return self._candidates - len(self._kept)

    @property
    def failed(self) -> int:
        return int(self.counts[FAIL])

    @property
    def undecided(self) -> int:
        return int(self.counts[UNDECIDED_TIER])

    def kept_pairs(self) -> list[PairView]:
        return by_rank([v for _, _, v in self._kept])

    def diverging_token(self) -> int | None:
        """The token (NONE for records without a token) where the divergence starts, or None."""
        if not (self.failed or self.undecided):
            return None
        ordered = sorted(self.tokens)  # NONE (-1) first: whole-sequence records come before any token
        decided = [tok for tok in ordered if self.tokens[tok].decided_suspect]
        if decided:
            return decided[0]
        return next(tok for tok in ordered if self.tokens[tok].suspect_at is not None)

    def first_divergence(self) -> PairView | None:
        tok = self.diverging_token()
        return None if tok is None else self.tokens[tok].first_suspect

    def first_failure(self) -> PairView | None:
        """The earliest failing pair at the diverging token, else at the first token (still known) with one."""
        tok = self.diverging_token()
        if tok is not None and self.tokens[tok].fail_at is not None:
            return self.tokens[tok].first_fail
        return next((self.tokens[k].first_fail for k in sorted(self.tokens) if self.tokens[k].fail_at), None)

    def growth(self, token: int) -> list[GrowthRow]:
        return self.growth_rows.table(token)


def _earliest(
    known: list[PairView], rows: np.ndarray, order: np.ndarray, pos: np.ndarray, views: Callable[..., list[PairView]]
) -> list[PairView]:
    """The EXAMPLES earliest pairs among those known and the round's `rows`."""
    if len(rows) > EXAMPLES:
        rows = rows[np.lexsort((pos[rows], order[rows]))[:EXAMPLES]]
    return known if not len(rows) else by_rank(known + views(rows))[:EXAMPLES]


def add_steps(steps_of: dict[int, int], tokens: np.ndarray, steps: np.ndarray) -> None:
    """Fold each token's earliest step into `steps_of` (records without a step say nothing)."""
    has = steps != NONE
    if not has.any():
        return
    uniq, inv = np.unique(tokens[has], return_inverse=True)
    first = np.full(len(uniq), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, inv, steps[has].astype(np.int64))
    for tok, step in zip(uniq.tolist(), first.tolist()):
        known = steps_of.get(tok)
        steps_of[tok] = step if known is None else min(known, step)
