"""The CUDA path (ORCH_LOG_CUDA, orchlog::cuda::log) compiled for real.

nvcc comes from PATH or, failing that, from NVIDIA's PyPI wheels, installed
once into .cache/cuda-toolkit (about 125 MB, hence the slow tier). This
machine class has no GPU, so the programs run the no-device path: host
pointers must still be logged and nothing may crash. On a GPU machine the
device tensor must read back equal to the host one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchlog import open_trace
from tests.native.build import CACHE, INCLUDE, PROGRAMS, build_cpp
from tests.native.host_processes import env

pytestmark = pytest.mark.slow

TOOLKIT = CACHE / "cuda-toolkit"
# One CUDA release, pinned so that every checkout compiles with the same nvcc.
WHEELS = [
    "nvidia-cuda-nvcc==13.5.37",
    "nvidia-nvvm==13.5.37",
    "nvidia-cuda-runtime==13.5.37",
    "nvidia-cuda-crt==13.5.37",
]


def _toolkit_from_wheels():
    root = TOOLKIT / "nvidia" / "cu13"
    if not (root / "bin" / "nvcc").exists():
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(TOOLKIT), *WHEELS],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if proc.returncode != 0:
            pytest.skip(f"nvcc is not on PATH and NVIDIA's wheels could not be installed: {proc.stderr.strip()[-300:]}")
        for tool in [*(root / "bin").iterdir(), *(root / "nvvm" / "bin").iterdir()]:
            if tool.is_file():
                tool.chmod(0o755)
    return root / "bin" / "nvcc", root / "include", next((root / "lib").glob("libcudart.so.*"))


@pytest.fixture(scope="module")
def cuda():
    nvcc = shutil.which("nvcc")
    if nvcc:
        home = Path(nvcc).resolve().parent.parent
        cudart = next(iter(sorted((home / "lib64").glob("libcudart.so*"))), None)
        if cudart is None:
            pytest.skip(f"nvcc at {nvcc} but no libcudart under {home}/lib64")
        return nvcc, str(home / "include"), str(cudart)
    return tuple(str(p) for p in _toolkit_from_wheels())


def _records(path):
    return list(open_trace(path)) if path.exists() else []


def test_nvcc_compiles_the_cuda_macros_and_the_program_runs_on_any_machine(cuda, tmp_path):
    nvcc, _, cudart = cuda
    exe = tmp_path / "cuda_log"
    proc = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            "-O2",
            "-DORCH_LOGGING",
            "-Xcompiler=-Wall,-Wextra",
            f"-I{INCLUDE}",
            str(PROGRAMS / "cuda_log.cu"),
            "-o",
            str(exe),
            "-cudart",
            "none",
            "-Xlinker",
            cudart,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr, proc.stderr  # neither nvcc's front end nor the host compiler
    trace = tmp_path / "cuda.jsonl"
    run = subprocess.run(
        [str(exe)],
        env=env(ORCH_LOG_FILE=str(trace), LD_LIBRARY_PATH=os.path.dirname(cudart)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    records = _records(trace)
    host_twins = [("f32", 0), ("offset", 0), ("managed", 0), ("f16", 0), ("api", 0)]
    if "no CUDA device" in run.stdout:
        assert [(r.checkpoint, r.token_idx) for r in records] == host_twins
    else:  # a GPU: every device tensor reads back equal to its host twin
        assert "error left: cudaSuccess" in run.stdout, run.stdout
        by_key = {(r.checkpoint, r.token_idx): r for r in records}
        assert sorted(by_key) == sorted([*host_twins, *((c, 1) for c, _ in host_twins)])
        for checkpoint in ("f32", "offset", "managed", "api", "f16"):
            host, device = by_key[(checkpoint, 0)], by_key[(checkpoint, 1)]
            assert (device.dtype, device.shape) == (host.dtype, host.shape), checkpoint
            assert device.blake3 == host.blake3, checkpoint
    assert "warning" not in run.stderr


def test_orchlog_cuda_builds_with_a_plain_host_compiler_against_the_runtime_headers(cuda, tmp_path):
    _, include, cudart = cuda
    exe = build_cpp(
        PROGRAMS / "cuda_host_compiler.cpp",
        "-DORCHLOG_CUDA",
        f"-isystem{include}",
        libs=(cudart, f"-Wl,-rpath,{os.path.dirname(cudart)}"),
    )
    trace = tmp_path / "host.jsonl"
    run = subprocess.run([str(exe)], env=env(ORCH_LOG_FILE=str(trace)), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "written", run.stderr
    assert [r.checkpoint for r in _records(trace)] == ["tensor"]
