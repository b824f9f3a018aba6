"""Matching the records of two traces by key, streamed so that memory follows the backlog, not the trace.

`match` pairs two sets of key rows: equal keys pair up in order of
appearance (the first `attn_norm`@5 of one side with the first of the
other, the second with the second). `Aligner` reads both traces batch by
batch, reading next from whichever side is further behind in its file, and
carries the records still waiting for a partner from round to round; what
is left at the end is unmatched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from orchlog.read.batch import RecordBatch
from orchlog.read.prefetch import prefetch
from orchlog.read.trace import Trace
from orchlog.records import record

_EMPTY = np.zeros(0, dtype=np.int64)


def _rank_in_group(groups: np.ndarray) -> np.ndarray:
    """For each element, how many earlier elements share its group."""
    order = np.argsort(groups, kind="stable")
    sorted_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, len(groups)]))
    rank = np.empty(len(groups), dtype=np.int64)
    rank[order] = np.arange(len(groups)) - run_start
    return rank


def match(keys_a: np.ndarray, keys_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices (ia, ib) of the pairs, in order of ia; equal keys pair first with first."""
    na, nb = len(keys_a), len(keys_b)
    if na == 0 or nb == 0:
        return _EMPTY, _EMPTY
    # The common case: both sides logged the same things in the same order, at least for a while.
    # Rows before the first difference pair with each other (every key's occurrences sit at the
    # same places on both sides, so first-with-first pairs them so); the rest is matched below.
    m = min(na, nb)
    differs = np.flatnonzero((keys_a[:m] != keys_b[:m]).any(axis=1))
    same = int(differs[0]) if len(differs) else m
    if same:
        head = np.arange(same, dtype=np.int64)
        ia, ib = match(keys_a[same:], keys_b[same:]) if same < m or na != nb else (_EMPTY, _EMPTY)
        return np.concatenate([head, ia + same]), np.concatenate([head, ib + same])
    both = np.concatenate([keys_a, keys_b])
    order = np.lexsort(both.T[::-1]) if both.shape[1] else np.arange(len(both))
    ranked = both[order]
    new_group = np.r_[True, (ranked[1:] != ranked[:-1]).any(axis=1)]
    group = np.empty(len(both), dtype=np.int64)
    group[order] = np.cumsum(new_group) - 1
    group_a, group_b = group[:na], group[na:]
    width = max(na, nb) + 1
    code_a = group_a * width + _rank_in_group(group_a)
    code_b = group_b * width + _rank_in_group(group_b)
    _, ia, ib = np.intersect1d(code_a, code_b, assume_unique=True, return_indices=True)
    by_a = np.argsort(ia, kind="stable")
    return ia[by_a].astype(np.int64), ib[by_a].astype(np.int64)


def unmatched(n: int, taken: np.ndarray) -> np.ndarray:
    keep = np.ones(n, dtype=bool)
    keep[taken] = False
    return np.flatnonzero(keep)


def _prepared(prepare: Callable[[RecordBatch], RecordBatch], batches: Iterator[RecordBatch]) -> Iterator[RecordBatch]:
    for batch in batches:
        yield prepare(batch)
    flush = getattr(prepare, "flush", None)
    if flush is not None:
        rest = flush()
        if len(rest):
            yield rest


@record
class Round:
    """One step of the walk: the records on each side and the pairs found among them."""

    a: RecordBatch
    b: RecordBatch
    ia: np.ndarray
    ib: np.ndarray


@record
class _Side:
    trace: Trace
    batches: Iterator[RecordBatch]
    pending: RecordBatch
    keys: np.ndarray
    done: bool = False
    rows_read: int = 0


class Aligner:
    """Walks two traces in step; iterate for Rounds, then read `leftover_a` / `leftover_b`."""

    def __init__(
        self,
        a: Trace,
        b: Trace,
        keys_of: Callable[[RecordBatch], np.ndarray],
        prepare: Callable[[RecordBatch], RecordBatch] = lambda batch: batch,
        prepare_b: Callable[[RecordBatch], RecordBatch] | None = None,
    ) -> None:
        """`prepare` turns each batch of a (and of b, unless `prepare_b` is given) into what is aligned; one
        with a `flush()` method may hold records back, and hands them over at the end of its trace."""
        self.keys_of = keys_of
        self.sides = [
            _Side(t, _prepared(p, prefetch(t.batches())), RecordBatch.empty(), keys_of(RecordBatch.empty()))
            for t, p in ((a, prepare), (b, prepare_b or prepare))
        ]
        self._read_next: _Side | None = None  # a side to read before pairing again (see __iter__)

    @property
    def rows_read(self) -> tuple[int, int]:
        return self.sides[0].rows_read, self.sides[1].rows_read

    @property
    def leftover_a(self) -> RecordBatch:
        return self.sides[0].pending

    @property
    def leftover_b(self) -> RecordBatch:
        return self.sides[1].pending

    def _next_side(self) -> _Side | None:
        if self._read_next is not None and not self._read_next.done:
            return self._read_next
        live = [s for s in self.sides if not s.done]
        if len(live) < 2:
            return live[0] if live else None
        a, b = live
        # A side whose records all found partners waits for nothing: read it while the other holds
        # records waiting for partners. (Comparing progress alone let one side run batches ahead, its
        # backlog copied again at every round: the readers run ahead of what the walk has taken.)
        if len(a.pending) != len(b.pending) and 0 in (len(a.pending), len(b.pending)):
            return a if len(a.pending) == 0 else b
        # Else read from the side that is behind in its file, so that both walk the same stretch of the run.
        pa, pb = a.trace.progress(), b.trace.progress()
        if pa == pb:
            return a if a.rows_read <= b.rows_read else b
        return a if pa < pb else b

    def __iter__(self) -> Iterator[Round]:
        while (side := self._next_side()) is not None:
            batch = next(side.batches, None)
            if batch is None:
                side.done = True
            else:
                side.rows_read += len(batch)
                side.pending = RecordBatch.concat([side.pending, batch])
                side.keys = np.concatenate([side.keys, self.keys_of(batch)])
                other = self.sides[1] if side is self.sides[0] else self.sides[0]
                if not other.done and 0 < len(other.pending) < len(batch) // 4 and self._read_next is None:
                    # The other side holds only a few rows (its batches end a few records apart from this
                    # side's): pairing now would make a round of those few at a whole round's cost, every
                    # other round. Read its next batch first.
                    self._read_next = other
                    continue
            self._read_next = None
            a, b = self.sides
            ia, ib = match(a.keys, b.keys)
            if len(ia):
                yield Round(a.pending, b.pending, ia, ib)
                for s, taken in ((a, ia), (b, ib)):
                    rest = unmatched(len(s.pending), taken)
                    if len(rest) == len(s.pending):
                        continue
                    if not len(rest) or rest[-1] - rest[0] + 1 == len(rest) == len(s.pending) - rest[0]:
                        start = int(rest[0]) if len(rest) else len(s.pending)  # the usual case: a matched head
                        s.pending, s.keys = s.pending.tail(start), s.keys[start:]
                    else:
                        s.pending, s.keys = s.pending.take(rest), s.keys[rest]
