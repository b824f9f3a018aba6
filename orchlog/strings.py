"""Strings: a column of str (or None) stored as a table of distinct values and one code per row.

Traces repeat a few dozen names millions of times; keeping each distinct
name once lets per-name work (matching a glob, looking up a rule, renaming
through a map, interning for alignment) run once per name and reach every
row by indexing. Code -1 is None.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np


def glob_matcher(patterns: Sequence[str]) -> Callable[[str | None], bool]:
    """A test for names matching any of the shell-style globs (`*`, `?`, `[...]`); None never matches."""
    if not patterns:
        return lambda name: False
    regex = re.compile("|".join(fnmatch.translate(p) for p in patterns))
    return lambda name: name is not None and regex.match(name) is not None


def _object_array(items: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


class Strings:
    __slots__ = ("table", "codes")

    def __init__(self, table: Sequence[str | None] | np.ndarray, codes: np.ndarray) -> None:
        self.table = table if isinstance(table, np.ndarray) else _object_array(table)
        self.codes = np.asarray(codes, dtype=np.int32)

    @staticmethod
    def from_values(values: Iterable[str | None]) -> Strings:
        index: dict[str, int] = {}
        codes = [-1 if v is None else index.setdefault(v, len(index)) for v in values]
        return Strings(list(index), np.array(codes, dtype=np.int32))

    @staticmethod
    def repeat(value: str | None, n: int) -> Strings:
        if value is None:
            return Strings([], np.full(n, -1, dtype=np.int32))
        return Strings([value], np.zeros(n, dtype=np.int32))

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, i: int | np.integer[Any]) -> str | None: ...
    @overload
    def __getitem__(self, i: slice | np.ndarray) -> Strings: ...
    def __getitem__(self, i: int | np.integer[Any] | slice | np.ndarray) -> str | None | Strings:
        if isinstance(i, (int, np.integer)):
            code = self.codes[i]
            return None if code < 0 else self.table[code]
        return Strings(self.table, self.codes[i])

    def values(self) -> np.ndarray:
        """The column as an object array of str and None."""
        return self.per_row(lambda s: s)

    def __iter__(self) -> Iterator[str | None]:
        return iter(self.values().tolist())

    def tolist(self) -> list[str | None]:
        out: list[str | None] = self.values().tolist()
        return out

    def __repr__(self) -> str:
        return f"Strings({self.tolist()!r})"

    def per_row(self, fn: Callable[[str | None], Any], dtype: Any = object) -> np.ndarray:
        """fn of every row's string, calling fn once per distinct string (and once for None)."""
        mapped = np.empty(len(self.table) + 1, dtype=dtype)
        for k, s in enumerate(self.table):
            mapped[k] = fn(s)
        mapped[-1] = fn(None)
        return mapped[self.codes]

    def equal_rows(self, other: Strings) -> np.ndarray:
        """Row by row against a column of the same length: True where both hold the same string (None equals
        nothing). Compares codes, after mapping other's table onto this one's, not the strings of every row."""
        index: dict[str, int] = {}  # each string's first code here (a mapped table may hold one twice, or None)
        mine = np.array([-1 if s is None else index.setdefault(s, k) for k, s in enumerate(self.table)] + [-1])
        theirs = np.array([-2 if s is None else index.get(s, -2) for s in other.table] + [-2])
        out: np.ndarray = (mine[self.codes] >= 0) & (mine[self.codes] == theirs[other.codes])
        return out

    def map(self, fn: Callable[[str], str | None]) -> Strings:
        """A column of fn(s) for every non-None row (fn called once per distinct string)."""
        return Strings(_object_array([fn(s) for s in self.table]), self.codes.copy())

    def distinct(self) -> list[str | None]:
        """The distinct values present, in order of first appearance."""
        return [value for value, _ in self.counts()]

    def counts(self) -> list[tuple[str | None, int]]:
        """(value, rows holding it) for each distinct value, in order of first appearance."""
        codes, first, n = np.unique(self.codes, return_index=True, return_counts=True)
        return [(None if codes[k] < 0 else self.table[codes[k]], int(n[k])) for k in np.argsort(first)]

    def equals(self, value: str) -> np.ndarray:
        hits = np.flatnonzero(self.table == value) if len(self.table) else np.zeros(0, dtype=np.int64)
        return np.isin(self.codes, hits)

    @staticmethod
    def concat(columns: Sequence[Strings]) -> Strings:
        if len(columns) == 1:
            return columns[0]
        index: dict[Any, int] = {}
        parts = []
        for col in columns:
            remap = np.array([index.setdefault(s, len(index)) for s in col.table] + [-1], dtype=np.int32)
            parts.append(remap[col.codes])
        return Strings(list(index), np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32))
