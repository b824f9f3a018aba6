"""A command's own imports, with the garbage collector paused: what modules create lives until the process
exits, so the collections that the allocations of a start-up trigger find nothing to free. Importing the
compare (NumPy and about 110 orchlog modules) ran 66 young-generation and 6 middle-generation collections,
6 ms of its 95 (benchmarks/compare_speed.py rows, docs/compare.md).

Afterwards the objects made so far (about 44,000 after the compare's imports) are moved where no later
collection looks at them (`gc.freeze`, once a process): each middle-generation collection of the compare
went through all of them again, 7-8 ms of a 50,000-row compare's GC time (0.5 ms once frozen)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_frozen = False  # a process's first command imports the modules; a later one (in the same process) does not


@contextmanager
def loading_modules() -> Iterator[None]:
    global _frozen
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not _frozen:
                gc.freeze()
                _frozen = True
            gc.enable()
