"""How far into each trace a token's records reach, kept while the compare walks, so that reading the
traces again for a diagnosis can stop once the records it needs are behind it.

One number per token seen (the largest file-order position of any record of that token; records
without a token under None), so memory follows the number of distinct tokens, not their values.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from orchlog.read.batch import NONE, RecordBatch


class Extent:
    def __init__(self) -> None:
        self._last: dict[int | None, int] = {}

    def add(self, batch: RecordBatch) -> None:
        if not len(batch):
            return
        # Each token's last record: sorted by token, then order, it ends its token's run.
        by_token = np.lexsort((batch.order, batch.token_idx))
        sorted_tokens = batch.token_idx[by_token]
        ends = np.flatnonzero(np.r_[sorted_tokens[1:] != sorted_tokens[:-1], True])
        tokens, top = sorted_tokens[ends], batch.order[by_token[ends]]
        for token, last in zip(tokens.tolist(), top.tolist()):
            key = None if token == NONE else token
            if last > self._last.get(key, -1):
                self._last[key] = last

    def last(self, tokens: Iterable[int | None]) -> int | None:
        """The file-order position after which no record of these tokens was seen; None when none was."""
        seen = [self._last[t] for t in tokens if t in self._last]
        return max(seen) if seen else None
