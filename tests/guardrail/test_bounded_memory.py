"""Reading stays one token row per side at a time: peak memory does not grow with the number of positions.

A must-match pair over a Qwen-sized vocabulary (151936 logits) is checked
in fresh processes, once with 16 positions and once with 48. Were rows held
until the end, the second would need 32 more rows per side (about 39 MB as
f32 arrays, far more as parsed JSON); the peaks must differ by much less.
(The peak settles after the first few rows, as the reader's buffers and the
allocator reach their working size: 1 row 194 MB, 4 rows 208 MB, 16, 28 and
56 rows 219-220 MB, of which 159 MB is the interpreter with orchlog imported.)
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from examples.guardrail.artifacts import Pair, Tree

VOCAB = 151936
ROW_BYTES = 4 * VOCAB  # one row of logits as f32

CHILD = """
import json, sys
from orchlog.guardrail import guardrail
result = guardrail(sys.argv[1])
peak = next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmHWM'))
print(json.dumps({"verdict": result.verdict, "tokens": len(result.pairs[0].tokens), "peak": peak}))
"""


def _peak(root, positions):
    tree = Tree(root, gen_len=positions, vocab=VOCAB)
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, encodings=("jsonl", "jsonl")))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(root)], capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)
    assert out["verdict"] == "PASS_GUARDRAIL_LOCAL" and out["tokens"] == positions
    return out["peak"]


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_number_of_positions(tmp_path):
    small, large = _peak(tmp_path / "small", 16), _peak(tmp_path / "large", 48)
    held_if_kept = 2 * (48 - 16) * ROW_BYTES
    assert large - small < held_if_kept / 3, (small, large)
