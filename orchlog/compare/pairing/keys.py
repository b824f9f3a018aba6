"""Alignment keys: which record fields decide that two records are the same observation.

A key is a tuple of field names; every record becomes a row of int64 ids
(strings are interned in one table shared by both traces, absent values are
-1), so that matching a batch of records is array work.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from orchlog import schema_gen
from orchlog.errors import OrchlogError
from orchlog.read.batch import NONE, RecordBatch
from orchlog.strings import Strings

DEFAULT_KEY = ("checkpoint", "layer", "stage", "token_idx", "step", "rank")
KEY_FIELDS = schema_gen.KEY_FIELDS  # every field that says where a record was taken
_STRING_FIELDS = {c.name for c in schema_gen.COLUMNS if c.kind == "text"}


def parse_key(text: str) -> tuple[str, ...]:
    """`checkpoint,token_idx` -> ("checkpoint", "token_idx"); unknown fields are an error."""
    fields = tuple(f.strip() for f in text.split(",") if f.strip())
    unknown = [f for f in fields if f not in KEY_FIELDS]
    if not fields or unknown:
        raise OrchlogError(f"--key {text!r}: fields must be a comma-separated subset of {', '.join(KEY_FIELDS)}")
    if len(set(fields)) != len(fields):
        raise OrchlogError(f"--key {text!r} names a field twice")
    return fields


class Interner:
    """One id per distinct string across both traces (None is -1)."""

    def __init__(self) -> None:
        self._ids: dict[str | None, int] = {None: NONE}

    def ids(self, column: Strings) -> np.ndarray:
        table = self._ids
        return column.per_row(lambda s: table.setdefault(s, len(table) - 1), dtype=np.int64)


def key_matrix(batch: RecordBatch, fields: Sequence[str], interner: Interner) -> np.ndarray:
    """One int64 row per record: the key fields as ids."""
    cols = [interner.ids(getattr(batch, f)) if f in _STRING_FIELDS else getattr(batch, f) for f in fields]
    if not cols:
        return np.zeros((len(batch), 0), dtype=np.int64)
    return np.stack(cols, axis=1).astype(np.int64, copy=False)
