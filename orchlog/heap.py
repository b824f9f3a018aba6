"""The `orchlog` command's heap: what it frees stays with the process for the next batch to reuse.

    heap.keep_freed()   # the command's own process, before it reads traces (compare, validate, graft-report,
                        # calibrate)

A compare allocates and frees blocks of the same few sizes over and over: each window's decoded columns,
each round's sketch and metric columns, 1-16 MiB apiece. glibc's malloc sets its thresholds from what
it has freed so far, maps such blocks afresh and trims its heaps back to the kernel as soon as a few
MiB are free at their top: every new block is then fresh pages, which the kernel zeroes on first touch
and which a VM's host, having taken the freed memory back, must back again. Fixed thresholds make those
blocks reuse freed memory: on a 2-core Zen 4 guest the 200,000-row full-mode compare of
benchmarks/compare_speed.py faulted in 47,000 pages instead of 59,000 (4-8% of its wall time) for 8-18
MB more peak RSS, and `validate --verify-hashes` of the 50,000-row trace 13,272 instead of 15,961
(docs/compare.md, "Twenty-eighth round"). A library caller's allocator is its own: only the command asks.
"""

from __future__ import annotations

MMAP_THRESHOLD = 32 << 20  # blocks under this come from the heap (glibc's own ceiling for its moving one)
TRIM_THRESHOLD = 64 << 20  # up to this much free at a heap's top stays with the process


def keep_freed() -> bool:
    """Set the C library's malloc to keep freed memory for reuse; False where it cannot (no native
    kernels, or a C library without glibc's settings): the command runs the same, only fresher pages."""
    try:
        from orchlog import _kernels
    except ImportError:
        return False
    return bool(_kernels.keep_freed_memory(MMAP_THRESHOLD, TRIM_THRESHOLD))
