"""liborchlog_c's CUDA entry points (orchlog/orchlog_cuda.h), from a C host.

Built without CUDA (the default) the library refuses device tensors: it
cannot tell device memory from host memory. Built against the CUDA runtime
(-DORCHLOG_C_CUDA=ON; the toolkit of tests/native/cuda_toolkit.py), a host
pointer is logged and read as host memory on any machine; device memory
takes the C++ path that tests/native/test_cuda_path.py and
scripts/gpu-check.sh check on a GPU.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchlog import open_trace
from tests.native.build import PROGRAMS, build_c, c_library
from tests.native.host_processes import env

PROGRAM = PROGRAMS / "c_cuda_entry_points.c"


def _run(exe: Path, trace: Path, **extra: str) -> tuple[dict[str, str], str]:
    run = subprocess.run(
        [str(exe)], env=env(ORCH_LOG_FILE=str(trace), **extra), capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    fields = run.stdout.strip().split(" ", 5)
    return dict(f.split("=", 1) for f in fields), run.stderr


def test_a_library_built_without_cuda_refuses_device_tensors_with_one_counted_warning(tmp_path):
    out, stderr = _run(build_c(PROGRAM), tmp_path / "t.jsonl")
    assert (out["available"], out["logged"], out["read"], out["errors"]) == ("0", "0", "-1", "1")
    assert "built without CUDA" in out["why"]
    assert stderr.count("orchlog: warning:") == 1 and "built without CUDA" in stderr
    assert [r.checkpoint for r in open_trace(tmp_path / "t.jsonl")] == []


@pytest.mark.slow
def test_a_library_built_with_cuda_logs_and_reads_host_memory_as_host_memory(cuda, tmp_path):
    cuda_root = str(Path(cuda[1]).parent)
    exe = build_c(PROGRAM, lib=c_library(cuda_root))
    out, stderr = _run(exe, tmp_path / "t.jsonl", LD_LIBRARY_PATH=str(Path(cuda[2]).parent))
    assert (out["available"], out["logged"], out["read"], out["skips"], out["errors"]) == ("1", "1", "0", "0", "0")
    assert stderr == ""
    (record,) = open_trace(tmp_path / "t.jsonl")
    assert (record.checkpoint, record.layer, record.dtype, record.shape) == ("host", 2, "f32", (4,))
