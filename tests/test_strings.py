"""Strings: a dictionary-encoded column that behaves like a list of str and None."""

from __future__ import annotations

import numpy as np

from orchlog.strings import Strings


def test_values_round_trip_with_none():
    col = Strings.from_values(["a", None, "b", "a"])
    assert col.tolist() == ["a", None, "b", "a"] and len(col) == 4
    assert col[0] == "a" and col[1] is None and col[np.array([3, 2])].tolist() == ["a", "b"]


def test_per_distinct_work_reaches_every_row():
    calls: list[str | None] = []
    col = Strings.from_values(["x", "y", "x", None, "x"])

    def length(s: str | None) -> int:
        calls.append(s)
        return -1 if s is None else len(s)

    lengths = col.per_row(length, dtype=np.int64)
    assert lengths.tolist() == [1, 1, 1, -1, 1] and sorted(calls, key=str) == [None, "x", "y"]
    assert col.map(str.upper).tolist() == ["X", "Y", "X", None, "X"]


def test_counts_follow_first_appearance_and_concat_merges_tables():
    one, two = Strings.from_values(["b", "a", "b"]), Strings.from_values(["c", "a", None])
    assert one.counts() == [("b", 2), ("a", 1)] and one.distinct() == ["b", "a"]
    both = Strings.concat([one, two])
    assert both.tolist() == ["b", "a", "b", "c", "a", None] and len(both.table) == 3
    assert both.equals("a").tolist() == [False, True, False, False, True, False]
    assert Strings.repeat("p", 2).tolist() == ["p", "p"] and Strings.repeat(None, 1).tolist() == [None]


def test_equal_rows_compares_strings_across_tables_and_none_equals_nothing():
    rng = np.random.default_rng(3)
    names = ["f32", "f16", "bf16", "i8", None]
    for _ in range(20):
        a = [names[i] for i in rng.integers(0, len(names), 50)]
        b = [names[i] for i in rng.integers(0, len(names), 50)]
        expected = [x is not None and x == y for x, y in zip(a, b)]
        assert Strings.from_values(a).equal_rows(Strings.from_values(b)).tolist() == expected
    empty = Strings.repeat(None, 3)
    assert empty.equal_rows(empty).tolist() == [False] * 3
    # A mapped table may name a string twice, or hold None: rows still compare by their strings.
    mapped = Strings(["f32", "f16", "f32", None], np.array([0, 1, 2, 3, -1, 2], dtype=np.int32))
    other = Strings(["f16", "f32"], np.array([1, 0, 1, 1, 1, 0], dtype=np.int32))
    assert mapped.equal_rows(other).tolist() == [True, True, True, False, False, False]
    assert other.equal_rows(mapped).tolist() == [True, True, True, False, False, False]
