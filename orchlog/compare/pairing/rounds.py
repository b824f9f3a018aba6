"""One walk over two traces: align their records and measure every pair, a round at a time.

Every consumer of paired records walks with it, set up by compare/plan.py: the compare (the reference
and ours), the noise table (the reference and a second reference, grading/noise.py), `orchlog
calibrate` (each known-good pair), graft-report (each grafted run), `--per-token` (the logits only,
unmeasured rounds) and the diagnosis (the records it keeps while the compare walks); each then grades,
keeps or learns from the rounds in its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from orchlog.compare.measuring.metrics import PairTable, measure
from orchlog.compare.pairing.align import Aligner, Round
from orchlog.compare.pairing.keys import Interner, key_matrix
from orchlog.compare.pairing.semantics import semantics
from orchlog.compare.pairing.sides import Side
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import Trace


class PairWalk:
    """Iterate for (round, its measured pairs); then `aligner` holds what found no partner and `sides` what each
    side read."""

    def __init__(
        self,
        a: Trace,
        b: Trace,
        key: tuple[str, ...],
        side_a: Side,
        side_b: Side,
        is_logits: Callable[[str | None], bool],
        windows: Callable[[str | None], bool],
        track_token: int | None = None,
        exact: bool = False,
        keep: Callable[[RecordBatch], RecordBatch] | None = None,
    ) -> None:
        interner = Interner()
        self.traces, self.sides = (a, b), (side_a, side_b)
        self.rules = semantics(a.format, b.format, exact)
        self.watchers: list[Callable[[int, RecordBatch], None]] = []
        prepare_a, prepare_b = (_Prepared(self, n, side, keep) for n, side in enumerate((side_a, side_b)))
        self.aligner = Aligner(a, b, lambda batch: key_matrix(batch, key, interner), prepare_a, prepare_b)
        self._measure = (is_logits, track_token, windows)

    def watch(self, watcher: Callable[[int, RecordBatch], None]) -> None:
        """Call `watcher(side, batch)` (side 0: a, 1: b) with every batch as the walk prepared it, before it is
        aligned: what a consumer that needs more than the pairs (the diagnosis) keeps from the one read."""
        self.watchers.append(watcher)

    def rounds(self) -> Iterator[Round]:
        """The aligned rounds, unmeasured."""
        return iter(self.aligner)

    def __iter__(self) -> Iterator[tuple[Round, PairTable]]:
        is_logits, track_token, windows = self._measure
        for rnd in self.aligner:
            yield rnd, measure(rnd.a, rnd.b, rnd.ia, rnd.ib, is_logits, track_token, self.rules, windows)


class _Prepared:
    """A side's preparation (its maps, views, shards, token shift), then the walk's filter, then its watchers;
    `flush` hands over what the side held back at the end of its trace, the same way."""

    def __init__(self, walk: PairWalk, n: int, side: Side, keep: Callable[[RecordBatch], RecordBatch] | None) -> None:
        self.walk, self.n, self.side, self.keep = walk, n, side, keep

    def _out(self, batch: RecordBatch) -> RecordBatch:
        if self.keep is not None:
            batch = self.keep(batch)
        for watcher in self.walk.watchers:
            watcher(self.n, batch)
        return batch

    def __call__(self, batch: RecordBatch) -> RecordBatch:
        return self._out(self.side(batch))

    def flush(self) -> RecordBatch:
        return self._out(self.side.flush())
