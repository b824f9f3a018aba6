"""prefetch: items arrive in order, errors arrive where they happened, an abandoned reader stops."""

from __future__ import annotations

import threading
import time

import pytest

from orchlog.read.prefetch import prefetch


def test_items_arrive_in_order():
    assert list(prefetch(iter(range(100)), depth=2)) == list(range(100))


def test_an_error_in_the_reader_is_raised_to_the_consumer_after_the_items_before_it():
    def source():
        yield 1
        yield 2
        raise OSError("disk gone")

    got = []
    with pytest.raises(OSError, match="disk gone"):
        for item in prefetch(source()):
            got.append(item)
    assert got == [1, 2]


def test_abandoning_the_consumer_stops_and_closes_the_reader():
    closed = threading.Event()

    def source():
        try:
            yield from range(10**9)
        finally:
            closed.set()

    it = prefetch(source(), depth=1)
    assert next(it) == 0
    it.close()
    deadline = time.monotonic() + 5
    while not closed.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert closed.is_set()
