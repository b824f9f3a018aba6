"""The diagnosis keeps memory bounded by a few tensor pairs, not by how many records surround a divergence.

Two diverging comparisons run in fresh processes, with the diagnosis on: 4 and 32 records of 8 MiB
tensors, all of one token (so every one of them is in the divergence's neighbourhood: its inputs, its
layers, the values elsewhere). Their peak RSS must differ by far less than the 32 records' extra size.
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

CHILD = """
import json, sys
from orchlog.compare import CompareOptions, compare
report = compare(sys.argv[1], sys.argv[2], CompareOptions(threshold=1e-3))
peak = next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmHWM'))
d = report.diagnosis[0]
print(json.dumps({"ran": d.ran, "kinds": [f.kind for f in d.findings], "peak": peak}))
"""


def _write(path, records, offset):
    rng = np.random.default_rng(0)
    base = rng.standard_normal(TENSOR).astype(np.float32)
    shifted = (np.roll(base, i) + np.float32(offset if i >= records // 2 else 0.0) for i in range(records))
    emit(path, (record("l_out", values, layer=i, token_idx=0) for i, values in enumerate(shifted)), mode="full")


def _peak(tmp_path, records):
    a, b = tmp_path / f"a{records}.bin", tmp_path / f"b{records}.bin"
    _write(a, records, 0.0)
    _write(b, records, 0.5)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(a), str(b)], capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)
    assert out["ran"]
    a.unlink()
    b.unlink()
    return out["peak"]


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_neighbourhood(tmp_path):
    small, large = _peak(tmp_path, 4), _peak(tmp_path, 32)
    extra_trace = 2 * 28 * 4 * TENSOR
    assert large - small < 4 * PAIR_BYTES, (small, large, extra_trace)
