"""One walk over two traces: align their records and measure every pair, a round at a time.

The compare walks the reference and ours with it, the noise table the reference and a second reference
(noise.py), `orchlog calibrate` each known-good pair (calibrate.py); each then grades, keeps or learns from
the measured rounds in its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from orchlog.compare.align import Aligner, Round
from orchlog.compare.keys import Interner, key_matrix
from orchlog.compare.metrics import PairTable, measure
from orchlog.compare.semantics import semantics
from orchlog.compare.sides import Side
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
    ) -> None:
        interner = Interner()
        self.traces, self.sides = (a, b), (side_a, side_b)
        self.rules = semantics(a.format, b.format, exact)
        self.aligner = Aligner(a, b, lambda batch: key_matrix(batch, key, interner), side_a, side_b)
        self._measure = (is_logits, track_token, windows)

    def __iter__(self) -> Iterator[tuple[Round, PairTable]]:
        is_logits, track_token, windows = self._measure
        for rnd in self.aligner:
            yield rnd, measure(rnd.a, rnd.b, rnd.ia, rnd.ib, is_logits, track_token, self.rules, windows)
