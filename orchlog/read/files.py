"""Opening and listing files without ever blocking on one that is not a regular file.

The lowest layer of reading: every reader, the directory walk, the weights
readers and the live-writer check open files through here, so that a FIFO with
no writer, a device or a socket is refused on its open descriptor, never read."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

from orchlog.errors import OrchlogError

_CHUNK = 1 << 20


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for messages."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: Path) -> io.BufferedReader:
    """The file opened for reading, or OrchlogError when it is not a regular file.

    Opened without blocking and checked on the open descriptor: a FIFO with no
    writer, a device or a socket (or a file swapped for one after a listing)
    never hangs or feeds a reader."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise OrchlogError(f"cannot read {path}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise OrchlogError(f"{path} is {file_kind(mode)}, not a regular file: orchlog reads files and directories")
    return os.fdopen(fd, "rb")


def open_file(path: Path) -> io.BufferedReader:
    """A file a dump names, opened for reading; OSError (not OrchlogError) when it cannot be, so that a
    reader or a loader reports that one file and goes on."""
    try:
        return open_regular(path)
    except OrchlogError as exc:
        raise OSError(str(exc)) from None


def read_at_most(f: io.BufferedIOBase, limit: int) -> bytes:
    """Up to `limit` bytes of f, a mebibyte at a time. `f.read(limit)` would reserve all `limit` bytes
    before reading one (CPython sizes the result from the count asked for): a gigabyte of address space
    for a file of a kilobyte, which fails under an address-space cap or strict overcommit."""
    parts: list[bytes] = []
    left = limit
    while left > 0:
        part = f.read(min(left, _CHUNK))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def regular_files(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The regular files below root in name order, and the other entries with why they are skipped."""
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(f for f in filenames if not f.startswith(".")):
            f = Path(dirpath) / name
            try:
                mode = f.stat().st_mode
            except OSError as exc:  # a dangling link, a file gone since the listing
                skipped.append((f, f"cannot read it ({exc.strerror or exc})"))
                continue
            if stat.S_ISREG(mode):
                files.append(f)
            else:
                skipped.append((f, f"{file_kind(mode)}, not a regular file"))
    return files, skipped
