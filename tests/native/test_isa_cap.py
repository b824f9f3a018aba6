"""ORCHLOG_ISA (native/cpp/include/orchlog/detail/isa.hpp) caps every run-time-dispatched kernel, the
emitter's and the comparer's, so that one machine measures what a machine without AVX-512 or AVX2 runs;
the records written are the same bytes whatever the cap."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from orchlog import _native

# A record of each size class (under one BLAKE3 chunk, a few chunks, more than a 64 KiB segment) in both
# encodings, and the kernels that wrote them.
PROBE = """
import hashlib, json, sys, numpy as np, orchlog
from orchlog import _kernels, _native
orchlog.configure(path=sys.argv[1], mode="both", select="")
for n in (100, 896, 30000):
    orchlog.log("h", np.sin(np.arange(n, dtype=np.float32)), n)
orchlog.close()
files = {p: hashlib.sha256(open(p, "rb").read()).hexdigest() for p in (sys.argv[1], sys.argv[1] + ".bin")}
print(json.dumps({"kernels": _kernels.isa(), **_native.kernel_paths(), "files": list(files.values())}))
"""


def _probe(cap: str | None, tmp_path=None) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORCHLOG_", "ORCH_LOG_"))}
    env["SOURCE_DATE_EPOCH"] = "0"  # the header's `created`: the same in every run
    if cap is not None:
        env["ORCHLOG_ISA"] = cap
    path = os.path.join(str(tmp_path), f"run-{cap}.jsonl")
    out = subprocess.run([sys.executable, "-c", PROBE, path], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout), out.stderr


def _widest() -> str:
    return "avx512" if "avx512" in _native.blake3_paths() else "avx2" if "avx2" in _native.blake3_paths() else ""


@pytest.mark.skipif(not _widest(), reason="needs an x86-64 CPU with AVX2")
def test_avx2_caps_every_kernel_at_avx2_and_writes_the_same_bytes(tmp_path):
    widest, _ = _probe(None, tmp_path)
    capped, _ = _probe("avx2", tmp_path)
    assert (widest["kernels"], widest["blake3"], widest["sketch"]) == (_widest(),) * 3
    assert (capped["kernels"], capped["blake3"], capped["sketch"]) == ("avx2", "avx2", "avx2")
    assert capped["files"] == widest["files"]


@pytest.mark.skipif(not _widest(), reason="needs an x86-64 CPU with AVX2")
def test_sse4_and_baseline_leave_the_vector_kernels_and_write_the_same_bytes(tmp_path):
    widest, _ = _probe(None, tmp_path)
    sse4, _ = _probe("sse4", tmp_path)
    baseline, _ = _probe("baseline", tmp_path)
    assert (sse4["kernels"], sse4["blake3"], sse4["sketch"], sse4["crc32c"]) == (
        "portable",
        "sse41",
        "portable",
        "sse42",
    )
    assert (baseline["blake3"], baseline["sketch"], baseline["crc32c"]) == ("portable", "portable", "portable")
    assert sse4["files"] == baseline["files"] == widest["files"]


def test_an_unknown_cap_warns_and_keeps_the_widest(tmp_path):
    widest, _ = _probe(None, tmp_path)
    odd, stderr = _probe("avx1024", tmp_path)
    assert (odd["kernels"], odd["blake3"], odd["sketch"]) == (widest["kernels"], widest["blake3"], widest["sketch"])
    # Once per native module that reads it (the emitter's and the comparer's are two libraries).
    assert 1 <= stderr.count("ORCHLOG_ISA=avx1024 is not avx512, avx2, sse4 or baseline") <= 2
