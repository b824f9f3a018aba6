"""A command's own imports, with the garbage collector paused: what modules create lives until the process
exits, so the collections that the allocations of a start-up trigger find nothing to free. Importing the
compare (NumPy and about 110 orchlog modules) ran 66 young-generation and 6 middle-generation collections,
6 ms of its 95 (benchmarks/compare_speed.py rows, docs/compare.md)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def loading_modules() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
