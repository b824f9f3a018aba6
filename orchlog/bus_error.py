"""What the `orchlog` command does when a file it maps is cut shorter under it.

    bus_error.exit_with("orchlog: error: ...")   # the command's own process (cli.run), once
    bus_error.guard()                            # before mapping a file: installs it where asked
    data = bus_error.map_whole(f)                # a whole open file, mapped read-only, guarded

The readers map large reads (trace windows, large tensors, weight files) from the page cache. Reading
a mapped page past its file's new end raises SIGBUS, which ends a process with "Bus error" and nothing
else: a compare of a trace that an engine run rewrites meanwhile dies that way. In the command's own
process a handler (native/python/kernels/bus_error.hpp) prints one line and exits 2 instead. A library
caller's process keeps its signals as they are. This module imports neither NumPy nor the kernels until
it installs the handler, so that declaring costs the command nothing.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mmap

_line: str | None = None
_installed = False

LINE = (
    "orchlog: error: {path} was cut shorter by another process while orchlog read it (a trace being "
    "rewritten?): run again once nothing is writing to it"
)
UNNAMED = "a file"  # in place of {path} where the file cannot be named


def exit_with(line: str = LINE) -> None:
    """Declare this process orchlog's own: once a file is mapped, a read past its cut end prints `line`, its
    `{path}` the file's path (or "a file" where /proc/self/maps does not name it), and exits with status 2."""
    global _line
    _line = line


def guard() -> None:
    """Install the handler, once, where `exit_with` asked for it; nothing otherwise, nor where it cannot be
    had (no native kernels, a failed `sigaction`): the mapping goes ahead either way."""
    global _installed
    if _line is None or _installed:
        return
    _installed = True
    try:
        from orchlog import _kernels

        _kernels.exit_on_bus_error(_line.replace("{path}", UNNAMED), _line)
    except (ImportError, OSError):  # no handler then: the read goes on, and so does the default action
        pass


def map_whole(f: IO[Any]) -> mmap.mmap:
    """The whole open file `f`, mapped read-only, the handler installed first where it was asked for."""
    import mmap  # here, not at the top: the CLI imports this module at its start, and `--help` maps nothing

    guard()
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
