"""A trace that reads some of a trace's files and keeps the records of some ranks: one part's input.

Places are numbered per file (`file index << ORDER_BITS | place in the
file`, see orchlog/compare/partial.py), and each file's tally (records
read, records kept, its header) travels with the partial report, so that
the merge can number places as the whole trace does and check that every
record was taken by exactly one part.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from orchlog.compare.partial import ORDER_BITS, FileTally
from orchlog.compare.shards import says_layout
from orchlog.read import formats
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import Trace


class PartTrace(Trace):
    def __init__(self, root: str, files: tuple[tuple[int, str], ...], ranks: frozenset[int] | None) -> None:
        members = [(index, formats.detect(Path(f)).open(Path(f))) for index, f in files]
        super().__init__(root, "+".join(sorted({m.format for _, m in members})) or "none", size=0)
        self.size = sum(m.size or 0 for _, m in members)
        self._members = members
        self._ranks = None if ranks is None else np.array(sorted(ranks), dtype=np.int64)
        self.tallies = {index: FileTally(m.path) for index, m in members}
        # Whether a record says it is a tensor-parallel piece: pieces of several ranks are gathered into one
        # record, so a split by rank would keep them apart (orchlog/scale/run.py then walks in one part).
        self.sharded = False
        keys = {m.default_key for _, m in members}
        self.default_key = keys.pop() if len(keys) == 1 else None

    def batches(self, rows: int = 4096, values: int = 1 << 22) -> Iterator[RecordBatch]:
        done = 0
        for index, m in self._members:
            tally = self.tallies[index]
            for batch in m.batches(rows, values):
                self.bytes_read = done + m.bytes_read
                tally.rows += len(batch)
                self.sharded = self.sharded or bool(says_layout(batch).any())
                batch.order = (index << ORDER_BITS) + batch.order
                if self._ranks is not None:
                    keep = np.isin(batch.rank, self._ranks)
                    if not keep.all():
                        batch = batch.take(np.flatnonzero(keep))
                tally.kept += len(batch)
                if len(batch):
                    yield batch
            done += m.size or 0
            self.bytes_read = done
            tally.header = m.header
            self.headers.extend(m.headers)
            self.diagnostics.extend(m.diagnostics)
