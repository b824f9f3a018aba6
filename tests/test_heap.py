"""The `orchlog` command's heap keeps what it frees: blocks a reader thread allocates and the walk frees,
of the sizes a compare's columns have, come back as memory the process already touched instead of fresh
pages. Each case runs in a fresh subprocess, since malloc's thresholds move with what a process has freed."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from orchlog import heap, kernels

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")

# A reader thread allocates and fills blocks of 1-15 MiB (as a window's decoded columns are made) while
# the main thread uses and frees them (as the walk does), twice over; prints the page faults of the second
# pass, when every size has been allocated and freed once already.
_CHURN = """
import queue, resource, sys, threading
import numpy as np
from orchlog import heap

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


def _second_pass_faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _CHURN, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the thresholds are glibc's malloc settings")
def test_freed_blocks_are_reused_instead_of_faulted_in_again():
    by_default, kept = _second_pass_faults("default"), _second_pass_faults("keep")
    # Measured on a 2-core EPYC guest: 7,342 faults by default, 1,546 kept (the first pass 10,481 / 5,927).
    assert kept * 2 < by_default, (kept, by_default)


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
