"""Peak memory follows the largest tensor pair, not the length of the trace.

Two comparisons run in fresh processes: one over 4 pairs of 8 MiB tensors,
one over 32 such pairs (8 times the trace, about 540 MB on disk in all).
What the comparer allocates (anonymous memory, sampled every millisecond)
must differ by far less than the extra trace size: a few tensor pairs'
worth at most. The peak RSS also counts the trace's pages mapped for
reading, and those a dropped mapping keeps until the unmapping thread gets
to it: on a loaded machine that thread falls behind, by at most UNMAP_LAG
bytes (kMaxOwed in native/python/kernels/mapping.hpp).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.tracegen import emit, record

TENSOR = 2 << 20  # elements: 8 MiB of f32
PAIR_BYTES = 2 * 4 * TENSOR
UNMAP_LAG = 72 << 20

CHILD = """
import json, sys, threading, time
def status(key):
    return next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith(key + ':'))
anon, done = [0], threading.Event()
def sample():
    while not done.wait(0.001):
        anon[0] = max(anon[0], status('RssAnon'))
threading.Thread(target=sample, daemon=True).start()
from orchlog.compare import compare
report = compare(sys.argv[1], sys.argv[2])
done.set()
print(json.dumps({"pairs": report.findings.pairs, "peak": status('VmHWM'), "anon": max(anon[0], status('RssAnon'))}))
"""


def _write(path, records, offset):
    rng = np.random.default_rng(0)
    base = rng.standard_normal(TENSOR).astype(np.float32)
    emit(
        path,
        (
            record("l_out", np.roll(base, i) + np.float32(offset), layer=i % 32, token_idx=i // 32)
            for i in range(records)
        ),
        mode="full",
    )


def _peak(tmp_path, records):
    a, b = tmp_path / f"a{records}.bin", tmp_path / f"b{records}.bin"
    _write(a, records, 0.0)
    _write(b, records, 1e-4)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(a), str(b)], capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)
    assert out["pairs"] == records
    a.unlink()
    b.unlink()
    return out["anon"], out["peak"]


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_trace(tmp_path):
    (anon_small, small), (anon_large, large) = _peak(tmp_path, 4), _peak(tmp_path, 32)
    extra_trace = (32 - 4) * PAIR_BYTES
    assert anon_large - anon_small < 2 * PAIR_BYTES, (anon_small, anon_large)
    assert anon_large - anon_small < extra_trace / 10
    assert large - small < 4 * PAIR_BYTES + UNMAP_LAG, (small, large)
