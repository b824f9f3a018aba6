"""How far into each trace a token's records reach, kept while the compare walks, so that reading the
traces again for a diagnosis can stop once the records it needs are behind it.

One number per token (the largest file-order position of any record of that token, `-1` for records
without a token), so memory follows the number of tokens, not of records.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from orchlog.read.batch import RecordBatch


class Extent:
    def __init__(self) -> None:
        self._last = np.full(0, -1, dtype=np.int64)  # index token + 1 (records without a token at 0)

    def add(self, batch: RecordBatch) -> None:
        if not len(batch):
            return
        slots = batch.token_idx + 1
        top = int(slots.max()) + 1
        if top > len(self._last):
            self._last = np.concatenate([self._last, np.full(top - len(self._last), -1, dtype=np.int64)])
        np.maximum.at(self._last, slots, batch.order)

    def last(self, tokens: Iterable[int | None]) -> int | None:
        """The file-order position after which no record of these tokens was seen; None when none was."""
        slots = [0 if t is None else t + 1 for t in tokens]
        seen = [int(self._last[s]) for s in slots if 0 <= s < len(self._last) and self._last[s] >= 0]
        return max(seen) if seen else None
