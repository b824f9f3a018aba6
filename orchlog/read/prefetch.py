"""Read ahead: run an iterator in a background thread, a few items ahead of its consumer.

Parsing a chunk of a trace (native code, the GIL released) then overlaps
with comparing the previous one. At most `depth` items wait in the queue,
so memory stays a constant number of batches. An exception in the reader
reaches the consumer at the point where the item would have.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
_DONE = object()


class _Failure:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def prefetch(source: Iterator[T], depth: int = 2) -> Generator[T, None, None]:  # close() stops the reader
    items: queue.Queue[Any] = queue.Queue(maxsize=depth)  # T, _DONE or a _Failure
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in source:
                if not put(item):
                    break
            else:
                put(_DONE)
        except BaseException as exc:
            put(_Failure(exc))
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=work, name="orchlog-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = items.get()
            if item is _DONE:
                return
            if isinstance(item, _Failure):
                raise item.exc
            yield item
    finally:
        stop.set()
