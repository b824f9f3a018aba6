"""What the diagnosis keeps while the compare walks: every record each side prepared, in order, so that
the diagnosis takes the records around a divergence from memory instead of reading both traces again.

The compare cannot know which pair will be its first divergence until its walk ends, so nothing is
selected yet; what is kept is bounded instead. Tensors are not copied: a kept record holds its loader,
or the chunk its bytes already lie in, as the walk's batches do. Past `MAX_ROWS` records or `MAX_BYTES`
(the records' columns, about 1 KB a summary record with its sketch, and the chunks they hold) on either
side, the keeper lets go of everything it holds and the diagnosis reads the traces again, stopping where
the walk's extents say the tokens it needs end (neighbours.gather). Memory stays bounded by a constant
whatever the length of the run.
"""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.neighbours import MAX_ROWS as MAX_TAKEN
from orchlog.diagnose.neighbours import WINDOW, Neighbourhood, Target, select_from
from orchlog.read.batch import RecordBatch

MAX_ROWS = 50_000  # records per side: a run of a 32-layer model with ~20 checkpoints a layer, ~80 tokens
MAX_BYTES = 64 << 20  # per side


class Keeper:
    def __init__(self, max_rows: int | None = None, max_bytes: int | None = None) -> None:
        self.max_rows = MAX_ROWS if max_rows is None else max_rows
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        self.parts: tuple[list[RecordBatch], list[RecordBatch]] = ([], [])
        self.rows = [0, 0]
        self.columns = [0, 0]  # bytes of the kept records' columns
        self.chunks: tuple[dict[int, int], dict[int, int]] = ({}, {})  # id of a chunk held -> its bytes
        self.let_go = False

    def add(self, side: int, batch: RecordBatch) -> None:
        """Keep a batch of `side` (0: a, 1: b) as the walk prepared it (PairWalk.watch)."""
        if self.let_go or not len(batch):
            return
        self.rows[side] += len(batch)
        self.columns[side] += _column_bytes(batch)
        chunks = self.chunks[side]
        if batch.data_buf is not None:
            for buf in batch.data_buf:
                if buf is not None and id(buf) not in chunks:
                    chunks[id(buf)] = memoryview(buf).nbytes
        if self.rows[side] > self.max_rows or self.columns[side] + sum(chunks.values()) > self.max_bytes:
            self.let_go = True
            self.parts = ([], [])
            self.chunks = ({}, {})
            return
        self.parts[side].append(batch)

    def neighbourhood(
        self, targets: list[Target], window: int = WINDOW, max_rows: int = MAX_TAKEN
    ) -> Neighbourhood | None:
        """The records the targets need, as neighbours.gather would read them; None when the keeper let go."""
        if self.let_go:
            return None
        (a, cut_a), (b, cut_b) = (select_from(part, targets, window, max_rows) for part in self.parts)
        return Neighbourhood(a, b, cut_a or cut_b)


def _column_bytes(batch: RecordBatch) -> int:
    total = 0
    for value in vars(batch).values():
        array = getattr(value, "codes", value)  # a Strings column: its codes (its table is shared)
        if isinstance(array, np.ndarray):
            total += array.nbytes
    return total
