"""Token ids: are both runs fed the same prompt, position by position? And `--token-offset`.

Two runs compared at token 5 only mean something if token 5 is the same token
on both sides. One side prepending a BOS (seed 004: llama.cpp's tokenizer adds
151643, HF's does not) shifts every position by one, and a comparison of the
shifted positions reports a "divergence" at token 0 that only says the
prompts differ. So when both traces say which token id each position holds,
compare checks them first and reports the first position whose ids differ.

Where the id of a position comes from: the record's `token_id` field (every
emitter takes it per call: orchlog.log(..., token_id=...), the ggml adapter
from the batch, orchlog.torch from input_ids), else, for traces written before
the field, the record's `meta["token_id"]`.

`--token-offset N` says that b's position p is a's position p + N (N = 1:
a has one more leading token, as a prepended BOS), so b's records are moved
N positions on before they are aligned; a negative N moves a's instead.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from orchlog import kernels
from orchlog.read.batch import NONE, RecordBatch
from orchlog.records import record

TOKEN_ID = "token_id"


def token_ids(batch: RecordBatch) -> np.ndarray:
    """Each record's token id (int64, NONE where the record does not say)."""
    ids: np.ndarray = np.array(batch.token_id, dtype=np.int64)
    for i in np.flatnonzero((ids == NONE) & ~kernels.is_none(batch.meta)).tolist():
        ids[i] = _from_meta(batch.meta[i])
    return ids


def token_id_of(batch: RecordBatch, i: int) -> int | None:
    """Record i's token id, or None."""
    value = int(batch.token_id[i])
    if value == NONE and batch.meta[i] is not None:
        value = _from_meta(batch.meta[i])
    return None if value == NONE else value


def _from_meta(meta: dict[str, Any]) -> int:
    value = meta.get(TOKEN_ID)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
        return int(value)
    return NONE


def shift_positions(batch: RecordBatch, by: int) -> RecordBatch:
    """The batch with every token position moved `by` on (records without a position keep none)."""
    if by == 0 or not len(batch):
        return batch
    return dataclasses.replace(batch, token_idx=np.where(batch.token_idx == NONE, NONE, batch.token_idx + by))


@record(frozen=True)
class TokenMismatch:
    position: int
    a: int
    b: int

    def describe(self) -> str:
        return f"token ids differ at position {self.position} (a: {self.a}, b: {self.b})"


class TokenIds:
    """The token id each position holds in one trace, gathered as its records stream by."""

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.conflicts: list[tuple[int, int, int]] = []  # (position, first id, another id)

    def add(self, batch: RecordBatch) -> None:
        ids = token_ids(batch)
        rows = np.flatnonzero((ids != NONE) & (batch.token_idx != NONE))
        if not len(rows):
            return
        # The distinct (position, id) pairs in order (np.unique along an axis sorts rows as bytes: slow).
        by_pair = np.lexsort((ids[rows], batch.token_idx[rows]))
        positions, values = batch.token_idx[rows][by_pair], ids[rows][by_pair]
        first = np.r_[True, (positions[1:] != positions[:-1]) | (values[1:] != values[:-1])]
        for position, value in zip(positions[first].tolist(), values[first].tolist()):
            known = self.ids.setdefault(position, value)
            if known != value and len(self.conflicts) < 10:
                self.conflicts.append((position, known, value))

    def __len__(self) -> int:
        return len(self.ids)


def first_difference(a: TokenIds, b: TokenIds) -> TokenMismatch | None:
    """The first position both traces give an id for where the ids differ; None when they agree (or do not say)."""
    common = sorted(set(a.ids) & set(b.ids))
    return next((TokenMismatch(p, a.ids[p], b.ids[p]) for p in common if a.ids[p] != b.ids[p]), None)


@record(frozen=True)
class TokenCheck:
    """The token ids both traces give for the same positions: how many, and the first that differ."""

    positions: int = 0
    mismatch: TokenMismatch | None = None
    offset: int = 0

    @staticmethod
    def between(a: TokenIds, b: TokenIds, offset: int = 0) -> TokenCheck:
        return TokenCheck(len(set(a.ids) & set(b.ids)), first_difference(a, b), offset)

    def to_json(self) -> dict[str, Any]:
        m = self.mismatch
        return {
            "positions": self.positions,
            "offset": self.offset,
            "first_difference": None if m is None else {"position": m.position, "a": m.a, "b": m.b},
        }
