"""ORCHLOG_ISA caps the Rust crate's run-time-dispatched kernels (native/rust/src/encoding/isa.rs) as it
caps the C++ header's: a Rust host writes the same bytes under every cap, AVX-512 (where the compiler and
the CPU have it), AVX2, SSE4.2 and the portable code, for rows that take the side-by-side BLAKE3 kernel
(896 f32: three chunks and a half), rows that do not, and tensors of several sketch chunks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cargo import rust_example


def _write(tmp_path: Path, elements: int, cap: str | None) -> tuple[bytes, bytes, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORCHLOG_", "ORCH_LOG_"))}
    path = tmp_path / f"{elements}-{cap}.jsonl"
    env.update(ORCH_LOG_FILE=str(path), ORCH_LOG_MODE="both", SOURCE_DATE_EPOCH="0")
    if cap is not None:
        env["ORCHLOG_ISA"] = cap
    run = subprocess.run(
        [str(rust_example("log_loop")), "40", str(elements)], env=env, capture_output=True, text=True, check=True
    )
    assert "logged 40 records, 0 errors" in run.stdout
    return path.read_bytes(), Path(f"{path}.bin").read_bytes(), run.stderr


@pytest.mark.parametrize("elements", [896, 1000, 5000])
def test_every_cap_writes_the_same_bytes(tmp_path, elements):
    widest = _write(tmp_path, elements, None)[:2]
    for cap in ("avx512", "avx2", "sse4", "baseline"):
        assert _write(tmp_path, elements, cap)[:2] == widest, cap


def test_a_cap_orchlog_does_not_know_warns_once_and_caps_nothing(tmp_path):
    jsonl, frames, stderr = _write(tmp_path, 896, "AVX2")
    assert stderr.count("ORCHLOG_ISA=AVX2 is not avx512, avx2, sse4 or baseline") == 1
    assert (jsonl, frames) == _write(tmp_path, 896, None)[:2]
