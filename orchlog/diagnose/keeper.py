"""What the diagnosis keeps while the compare walks: the records each side prepared, in order, so that the
diagnosis takes the records around a divergence from memory instead of reading both traces again.

The compare cannot know which pair will be its first divergence until its walk ends, so nothing is
selected yet; what is kept is bounded instead. Tensors are not copied: a kept record holds its loader,
or the chunk its bytes already lie in, as the walk's batches do. Past `MAX_ROWS` records or `MAX_BYTES`
(the records' columns, about 1 KB a summary record with its sketch, and the chunks they hold) on a side,
the keeper stops taking that side's batches and keeps only the start of the trace: the batches whose
columns come to `PREFIX_BYTES` (the chunks they hold are the page cache's mapped pages, not the
process's). A first divergence usually lies near a run's start, and the records its diagnosis needs end
where the walk's extents say (neighbours.gather): when every side's kept start reaches that far, the
diagnosis reads nothing again; otherwise the keeper lets go and the traces are read again up to there.
The start is smaller than the whole because it is held while the walk goes on: memory the walk's later
batches cannot reuse, so fresh pages for them instead (64 MiB of them take 10 ms at 7 GB/s, over 100 ms
in a 2-core guest's slow minutes), against the 10-50 ms a second read of an early divergence costs.
Memory stays bounded by a constant whatever the length of the run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from orchlog.diagnose.neighbours import MAX_ROWS as MAX_TAKEN
from orchlog.diagnose.neighbours import WINDOW, Neighbourhood, Target, select_from
from orchlog.read.batch import RecordBatch

MAX_ROWS = 50_000  # records per side: a run of a 32-layer model with ~20 checkpoints a layer, ~80 tokens
MAX_BYTES = 64 << 20  # per side
PREFIX_BYTES = 16 << 20  # per side: the columns of the start kept past those bounds

WHOLE = None  # a side's reach when every batch of it was kept


def _never() -> bool:
    return False


class Keeper:
    def __init__(
        self,
        max_rows: int | None = None,
        max_bytes: int | None = None,
        holding: tuple[Callable[[], bool], Callable[[], bool]] = (_never, _never),
        prefix_bytes: int | None = None,
    ) -> None:
        """`holding[side]()`: whether that side's preparation holds read records back at the moment (pieces
        waiting for their partners), which a later batch then brings out of file order."""
        self.max_rows = MAX_ROWS if max_rows is None else max_rows
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        self.prefix_bytes = PREFIX_BYTES if prefix_bytes is None else prefix_bytes
        self.holding = holding
        self.parts: tuple[list[RecordBatch], list[RecordBatch]] = ([], [])
        self.sizes: tuple[list[int], list[int]] = ([], [])  # bytes of each kept batch's columns
        self.rows = [0, 0]
        self.chunks: list[dict[int, int]] = [{}, {}]  # per side: id of a chunk held -> its bytes
        # Per side: WHOLE while every batch is kept; then the file-order position up to which every record of
        # the trace is among the kept ones (-1: none can be vouched for).
        self.reach: list[int | None] = [WHOLE, WHOLE]

    def add(self, side: int, batch: RecordBatch) -> None:
        """Keep a batch of `side` (0: a, 1: b) as the walk prepared it (PairWalk.watch)."""
        if self.reach[side] is not WHOLE or not len(batch):
            return
        chunks = dict(self.chunks[side])
        if batch.data_buf is not None:
            for buf in batch.data_buf:
                if buf is not None and id(buf) not in chunks:
                    chunks[id(buf)] = memoryview(buf).nbytes
        size = _column_bytes(batch)
        rows, columns = self.rows[side] + len(batch), sum(self.sizes[side]) + size
        if rows > self.max_rows or columns + sum(chunks.values()) > self.max_bytes:
            self._keep_start(side, batch)
            return
        self.rows[side], self.chunks[side] = rows, chunks
        self.parts[side].append(batch)
        self.sizes[side].append(size)

    def _keep_start(self, side: int, refused: RecordBatch) -> None:
        """Past the bounds: keep the first batches, up to `prefix_bytes` of columns, and say how far into the
        trace they vouch for every record. Every record read so far is kept or in `refused`, unless the side
        still holds some back; a batch may carry records from earlier in the file (pieces gathered late), so
        the kept start reaches to before the earliest record of any batch let go."""
        parts, sizes = self.parts[side], self.sizes[side]
        kept, total = 0, 0
        while kept < len(parts) and total + sizes[kept] <= self.prefix_bytes:
            total += sizes[kept]
            kept += 1
        dropped = [*parts[kept:], refused]
        del parts[kept:], sizes[kept:]
        self.chunks[side] = {}
        if self.holding[side]() or not parts:
            self.reach[side] = -1
            return
        top = max(int(batch.order.max()) for batch in parts)
        self.reach[side] = min(top, *(int(batch.order.min()) - 1 for batch in dropped if len(batch)))

    def neighbourhood(
        self,
        targets: list[Target],
        window: int = WINDOW,
        max_rows: int = MAX_TAKEN,
        stop_after: tuple[int | None, int | None] = (None, None),
    ) -> Neighbourhood | None:
        """The records the targets need, as neighbours.gather would read them (`stop_after`: as there, where
        each trace's needed records end; None, anywhere); None when a side's kept records do not reach that far.
        """
        for reach, stop in zip(self.reach, stop_after):
            if reach is not WHOLE and (stop is None or stop > reach):
                return None
        (a, cut_a), (b, cut_b) = (select_from(part, targets, window, max_rows) for part in self.parts)
        return Neighbourhood(a, b, cut_a or cut_b)

    def let_go(self) -> None:
        """Drop every kept record (before the traces are read again)."""
        self.parts, self.sizes = ([], []), ([], [])
        self.chunks = [{}, {}]


def _column_bytes(batch: RecordBatch) -> int:
    total = 0
    for value in vars(batch).values():
        array = getattr(value, "codes", value)  # a Strings column: its codes (its table is shared)
        if isinstance(array, np.ndarray):
            total += array.nbytes
    return total
