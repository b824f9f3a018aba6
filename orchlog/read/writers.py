"""Whether a trace is still being written: the emitters hold an exclusive flock on each file they write (a
second process must not empty it), so a file with such a lock has a live writer, and what a reader sees of it
is the part written so far.

    for path, pid in live_writers("run/"):
        print(f"{path} is still being written by pid {pid}")

The locks are read from /proc/locks (Linux), which asks nothing of the writer: taking a lock to test for one
would make a writer that starts at that moment refuse its file. A lock is matched to a file by device and
inode, or, where the file system shows other numbers than the lock (overlayfs), by the inode and the holder's
open descriptors. Elsewhere (no /proc/locks) nothing is found.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from orchlog.read.files import regular_files

LOCKS = Path("/proc/locks")


def _exclusive_flocks(text: str) -> dict[tuple[int, int, int], int]:
    """(major, minor, inode) -> pid of every granted exclusive flock in /proc/locks' text."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 6973 fe:00:10035210 0 EOF"; waiters have "->" after the number.
        if len(parts) < 6 or parts[1] != "FLOCK" or parts[3] != "WRITE":
            continue
        try:
            major, minor, inode = parts[5].split(":")
            out[(int(major, 16), int(minor, 16), int(inode))] = int(parts[4])
        except ValueError:
            continue
    return out


def _holds_open(pid: int, st: os.stat_result) -> bool:
    """Whether process `pid` has the file of `st` open (its descriptors, where this process may look)."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        for fd in fds.iterdir():
            try:
                other = fd.stat()
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                return True
    except OSError:
        pass
    return False


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return regular_files(path)[0]
    return [path]


class LockTable:
    """The exclusive flocks of every process, read from /proc/locks on a thread of its own from the moment
    this is made. Listing the locks takes the kernel's lock on every file lock of the system for writing,
    which first waits for an RCU grace period: 8-25 ms on a 2-core VM, a tenth of a small compare, that a
    command can spend importing and opening its traces instead. `ahead=False` reads them at once."""

    def __init__(self, ahead: bool = True) -> None:
        self._locks: dict[tuple[int, int, int], int] = {}
        self._thread: threading.Thread | None = None
        if ahead:
            self._thread = threading.Thread(target=self._read, name="orchlog-locks", daemon=True)
            try:
                self._thread.start()
                return
            except RuntimeError:  # no thread to be had: read them now
                self._thread = None
        self._read()

    def _read(self) -> None:
        try:
            self._locks = _exclusive_flocks(LOCKS.read_text(encoding="ascii", errors="replace"))
        except OSError:
            pass  # no /proc/locks (not Linux): nothing is found

    def writers(self, path: str | os.PathLike[str]) -> list[tuple[str, int]]:
        """(file, pid) for each file of the trace at `path` (a file or a directory) that a live process holds
        an exclusive lock on, as the table was read; empty when none does or the locks cannot be read."""
        if self._thread is not None:
            self._thread.join()
        locks = self._locks
        if not locks:
            return []
        by_inode: dict[int, list[int]] = {}
        for (_, _, inode), pid in locks.items():
            by_inode.setdefault(inode, []).append(pid)
        found = []
        for f in _files(Path(path)):
            try:
                st = f.stat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            holder = locks.get((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
            if holder is None:
                holder = next((p for p in by_inode.get(st.st_ino, []) if _holds_open(p, st)), None)
            if holder is not None:
                found.append((str(f), holder))
        return found


_ahead: LockTable | None = None  # the table a command started reading (read_ahead), while it runs


@contextlib.contextmanager
def read_ahead() -> Iterator[None]:
    """Within the block, `live_writers` answers from one LockTable read on a thread from its start: a command
    that opens a trace (show, validate) enters it before its imports, which then hide the table's 10-25 ms.
    Outside it every call reads the locks afresh (a long-lived caller's traces may change hands)."""
    global _ahead
    _ahead = LockTable()
    try:
        yield
    finally:
        _ahead = None


def live_writers(path: str | os.PathLike[str]) -> list[tuple[str, int]]:
    """(file, pid) for each file of the trace at `path` (a file or a directory) that a live process holds
    an exclusive lock on; empty when none does or the locks cannot be read."""
    return (_ahead or LockTable(ahead=False)).writers(path)


def still_written(path: str | os.PathLike[str]) -> list[str]:
    """One line for each file of the trace that is still being written, for a command's notes."""
    return [
        f"{file} is still being written (process {pid} holds its lock): what is read is the part written so far"
        for file, pid in live_writers(path)
    ]
