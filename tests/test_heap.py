"""The `orchlog` command's heap keeps what it frees: blocks a reader thread allocates and the walk frees,
of the sizes a compare's columns have, come back as memory the process already touched instead of fresh
pages. Each case runs in a fresh subprocess, since malloc's thresholds move with what a process has freed."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from orchlog import heap, kernels

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")

# A reader thread allocates and fills blocks of 1-15 MiB (as a window's decoded columns are made) while
# the main thread uses and frees them (as the walk does), twice over; prints the page faults of the second
# pass, when every size has been allocated and freed once already. Transparent huge pages are off for the
# process, so that a fault is a 4 KiB page whatever the machine's THP setting.
_CHURN = """
import ctypes, queue, resource, sys, threading
import numpy as np
from orchlog import heap

ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE

if sys.argv[1] == "keep":
    assert heap.keep_freed()
sizes = [((i * 7919) % 15 + 1) << 20 for i in range(60)]

def churn():
    blocks = queue.Queue(maxsize=2)
    def read():
        for size in sizes:
            block = np.empty(size, np.uint8)
            block.fill(1)
            blocks.put(block)
        blocks.put(None)
    reader = threading.Thread(target=read)
    reader.start()
    while (block := blocks.get()) is not None:
        used = block + 1
        del block, used
    reader.join()

churn()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
churn()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _probe(script: str, mode: str, env: dict[str, str] | None = None) -> int:
    """The number `script` prints, run in a fresh interpreter with `mode` as its argument."""
    out = subprocess.run(
        [sys.executable, "-c", script, mode],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return int(out.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the thresholds are glibc's malloc settings")
def test_freed_blocks_are_reused_instead_of_faulted_in_again():
    # The baseline is glibc's malloc as a process starts: blocks from 128 KiB up are mapped and unmapped.
    # Left to itself, glibc raises that threshold after it frees a mapped block, by an amount that depends
    # on the order of the frees and the threads': 775 to 9,906 faults on the same machine, run to run,
    # too loose a baseline to test against.
    at_start = _probe(_CHURN, "default", {"MALLOC_MMAP_THRESHOLD_": str(128 << 10)})
    kept = _probe(_CHURN, "keep")
    # Measured on a 2-core Zen 4 guest: 61,410-63,965 faults at glibc's starting threshold, 257-514 kept.
    assert kept * 4 < at_start, (kept, at_start)


def test_thresholds_out_of_range_are_refused():
    from orchlog import _kernels

    with pytest.raises(ValueError, match="thresholds"):
        _kernels.keep_freed_memory(-1, heap.TRIM_THRESHOLD)
    with pytest.raises(ValueError, match="thresholds"):
        _kernels.keep_freed_memory(heap.MMAP_THRESHOLD, 1 << 31)


def test_without_native_kernels_nothing_is_set(monkeypatch):
    import orchlog

    # `from orchlog import _kernels` then fails, as where the extension was not built
    monkeypatch.delattr(orchlog, "_kernels", raising=False)
    monkeypatch.setitem(sys.modules, "orchlog._kernels", None)
    assert heap.keep_freed() is False


@pytest.mark.parametrize(
    "command",
    [
        ["compare", "{t}", "{t}", "-q"],
        ["validate", "{t}", "-q"],
        ["graft-report", "{t}", "{t}", "-q"],
        ["calibrate", "{t}", "{t}", "-o", "{out}", "-q"],
    ],
)
def test_the_commands_that_read_traces_keep_freed_memory(monkeypatch, tmp_path, command):
    """Each asks before it reads (compare before its read-ahead starts); a library caller's process is
    left alone."""
    from orchlog import _kernels
    from orchlog.cli import main

    calls = []

    def keep_freed_memory(*thresholds: int) -> bool:
        calls.append(thresholds)
        return True

    monkeypatch.setattr(_kernels, "keep_freed_memory", keep_freed_memory)
    trace = tmp_path / "t.jsonl"
    trace.write_text("")
    main([arg.format(t=trace, out=tmp_path / "tol.toml") for arg in command])
    assert calls == [(heap.MMAP_THRESHOLD, heap.TRIM_THRESHOLD)]


# How many more bytes malloc holds in mapped blocks once one 15 MiB block (a window's column) is made, or
# -1 where glibc has no mallinfo2 (before 2.33).
_MAPPED = """
import ctypes, sys
import numpy as np
from orchlog import heap

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
if not hasattr(libc, "mallinfo2"):
    print(-1)
    sys.exit()
libc.mallinfo2.restype = MallInfo2
if sys.argv[1] == "keep":
    assert heap.keep_freed()
before = libc.mallinfo2().hblkhd
block = np.empty(15 << 20, np.uint8)
print(libc.mallinfo2().hblkhd - before)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the thresholds are glibc's malloc settings")
def test_a_column_sized_block_comes_from_the_heap_from_the_first_one_on():
    by_default, kept = _probe(_MAPPED, "default"), _probe(_MAPPED, "keep")
    if by_default < 0:
        pytest.skip("glibc before 2.33 has no mallinfo2")
    # By default glibc maps a block of 15 MiB (its threshold starts at 128 KiB); kept, it is carved from the heap.
    assert by_default >= 15 << 20 and kept == 0, (by_default, kept)
