"""Read a command's binary traces ahead while it is still importing.

    readahead.start([path_a, path_b])   # first thing in `orchlog compare`: no NumPy needed
    ...                                 # the imports, on one core; the other reads and decodes
    take = readahead.claim(fd)          # the trace's reader, on the file it opened: None or a function
    window = take(pos, trail)           # None, or (buffer, bytes read, decode_frames' columns)

A compare of two 200 MB traces spends its first 0.1 s importing NumPy and its own modules on one core;
the first windows of both traces are read and decoded on the other in that time by a native thread
(native/python/kernels/readahead.hpp), instead of later, when the walk keeps both cores busy. Only what
the page cache holds is read ahead (a trace just written): waiting for a disk there cost more than it
saved. The odd page the cache dropped (a VM's memory reclaim leaves such holes) is asked for and read
across; a longer gap ends the read-ahead of that file. A reader takes a window only where it would have read one itself (the same offset and frame
state), so what it reads does not depend on the read-ahead; it matches its file by device and inode, so
a trace replaced in between is read afresh. The first window taken stops the thread: memory stays
bounded by the windows read ahead (`AHEAD` of each file). Windows are mapped from the page cache, as the
reader maps its own, rather than copied: on a 2-core VM the copies' fresh pages held the thread to 2-5 of
the 50,000-row pair's 12 windows before the imports ended; mapped, all 12 are ready. This module imports
neither NumPy nor the readers, so that starting costs the command nothing.
"""

from __future__ import annotations

import atexit
import os
import stat
from collections.abc import Callable, Iterable
from typing import Any

from orchlog import bus_error

WINDOW = 16 << 20  # bytes read and decoded at a time (the reader maps larger ones once it takes over)
MAP_FROM = 1 << 20  # tensors and windows of at least this many bytes are memory-mapped instead of read
AHEAD = 6  # windows read ahead of each file

# (st_dev, st_ino) -> (the native read-ahead, its index for the file); a reader's claim removes its file.
_started: dict[tuple[int, int], tuple[Any, int]] = {}
_all: list[Any] = []


def start(
    paths: Iterable[str | os.PathLike[str]], window: int = WINDOW, ahead: int = AHEAD, map_from: int = MAP_FROM
) -> None:
    """Begin reading ahead the regular files among `paths` that are orchlog binary streams (the native
    side checks the first bytes); a path that is anything else, or no native extension, reads nothing.
    Windows of `map_from` bytes or more are mapped from the page cache, smaller ones copied."""
    try:
        from orchlog import _kernels
    except ImportError:
        return
    files, seen = [], set()
    for path in paths:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:  # `compare A A`: one reader takes it
            seen.add((st.st_dev, st.st_ino))
            files.append(os.fsencode(path))
    if not files:
        return
    bus_error.guard()
    reader = _kernels.ReadAhead(files, window, ahead, MAP_FROM, map_from)
    _all.append(reader)
    for i in range(len(files)):
        if (identity := reader.identity(i)) is not None:
            _started.setdefault(identity, (reader, i))


def claim(fd: int) -> Callable[[int, int], tuple[Any, int, dict[str, Any]] | None] | None:
    """The read-ahead of the file open as `fd`, for the one reader that reads it through: a function of
    (offset, trail) that returns the window read there, or None; None when nothing was read ahead."""
    if not _started:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    found = _started.pop((st.st_dev, st.st_ino), None)
    if found is None:
        return None
    reader, i = found
    return lambda pos, trail: reader.take(i, pos, trail)


def finish() -> None:
    """Stop every read-ahead and free what no reader took (at exit, and in the tests)."""
    _started.clear()
    while _all:
        _all.pop().finish()


def _forget() -> None:
    # A child process has none of the parent's threads: nothing is read ahead for it (its copies of the
    # native objects know they were forked, and wait for no thread when they go).
    _started.clear()
    _all.clear()


atexit.register(finish)
os.register_at_fork(after_in_child=_forget)
