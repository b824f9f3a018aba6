"""The Rust crate's feature `cuda` against a real liborchlog_c built with CUDA.

The crate loads the library at run time (ORCHLOG_C_LIBRARY); its test
native/rust/tests/cuda_with_library.rs is ignored by a plain `cargo test` and
run here, where the library is built (-DORCHLOG_C_CUDA=ON, with the toolkit
of tests/native/cuda_toolkit.py). Without a GPU the host pointer it logs
takes the no-device path; scripts/gpu-check.sh covers device memory.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cargo import CRATE, cargo, cargo_path, env
from tests.native.build import c_library

pytestmark = pytest.mark.slow


def test_orch_log_cuda_reads_through_liborchlog_c_and_writes_what_orch_log_writes(cuda):
    if cargo() is None:
        pytest.skip("cargo not found; scripts/bootstrap.sh installs it")
    lib = c_library(str(Path(cuda[1]).parent))
    run = subprocess.run(
        [
            cargo_path(),
            "test",
            "--quiet",
            "--locked",
            "--features",
            "cuda",
            "--test",
            "cuda_with_library",
            "--",
            "--ignored",
        ],
        cwd=CRATE,
        env={**env(), "ORCHLOG_C_LIBRARY": str(lib), "LD_LIBRARY_PATH": str(Path(cuda[2]).parent)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout, run.stdout
