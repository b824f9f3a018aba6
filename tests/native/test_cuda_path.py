"""The CUDA path (ORCH_LOG_CUDA, orchlog::cuda::log) compiled for real.

nvcc comes from PATH or, failing that, from NVIDIA's PyPI wheels, installed
once into .cache/cuda-toolkit (about 125 MB, hence the slow tier; the fixture
`cuda` is in conftest.py). This
machine class has no GPU, so the programs run the no-device path: host
pointers must still be logged and nothing may crash. On a GPU machine the
device tensor must read back equal to the host one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchlog import open_trace
from tests.native.build import INCLUDE, PROGRAMS, ROOT, build_cpp, build_cuda
from tests.native.host_processes import env

pytestmark = pytest.mark.slow

NATIVE_TESTS = ROOT / "native" / "cpp" / "tests"  # support/vectors.hpp
VECTORS = ROOT / "schema" / "vectors"


def _records(path):
    return list(open_trace(path)) if path.exists() else []


def _no_warning(build: subprocess.CompletedProcess[str]) -> None:
    assert "warning" not in build.stderr, build.stderr


def _nvcc(cuda, program: str) -> Path:
    """tests/native/programs/PROGRAM.cu, compiled; fails on any warning of nvcc's front end or the host
    compiler (a build is cached only once it compiled without one: tests/native/build.py)."""
    nvcc, _, cudart = cuda
    flags = [
        "-std=c++17",
        "-O2",
        "-DORCH_LOGGING",
        "-Xcompiler=-Wall,-Wextra",
        f"-I{INCLUDE}",
        f"-I{NATIVE_TESTS}",
        f'-DORCHLOG_VECTORS_DIR="{VECTORS}"',
    ]
    support = sorted((NATIVE_TESTS / "support").glob("*.hpp"))
    return build_cuda(
        nvcc, PROGRAMS / f"{program}.cu", flags, ("-cudart", "none", "-Xlinker", cudart), support, _no_warning
    )


def _run_on_a_gpu(cuda, exe: Path, *args: str, **knobs: str) -> subprocess.CompletedProcess[str]:
    """Runs a GPU check; without a GPU the test says SKIPPED, never passed."""
    run = subprocess.run(
        [str(exe), *args],
        env=env(LD_LIBRARY_PATH=os.path.dirname(cuda[2]), SOURCE_DATE_EPOCH="0", **knobs),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode == 0 and run.stdout.strip() == "no CUDA device":
        pytest.skip("needs an NVIDIA GPU (scripts/gpu-check.sh runs it where there is one)")
    return run


def test_nvcc_compiles_the_cuda_macros_and_the_program_runs_on_any_machine(cuda, tmp_path):
    _, _, cudart = cuda
    exe = _nvcc(cuda, "cuda_log")
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


@pytest.fixture(scope="module")
def capture_program(cuda):
    return _nvcc(cuda, "cuda_capture")


@pytest.fixture(scope="module")
def summary_program(cuda):
    return _nvcc(cuda, "cuda_summary")


def test_nvcc_compiles_the_gpu_checks_without_a_warning(capture_program, summary_program, graph_ring_program):
    assert capture_program.exists() and summary_program.exists() and graph_ring_program.exists()


def test_a_logged_tensor_never_breaks_a_graph_capture_nor_changes_the_replays(cuda, capture_program, tmp_path):
    run = _run_on_a_gpu(cuda, capture_program, ORCH_LOG_FILE=str(tmp_path / "capture.jsonl"))
    assert run.returncode == 0 and run.stdout.strip().endswith("captures: OK"), run.stdout + run.stderr
    assert [r.checkpoint for r in _records(tmp_path / "capture.jsonl")] == ["y", "other"]


def test_device_summaries_equal_their_cpu_twin_and_copy_then_hash_byte_for_byte(cuda, summary_program, tmp_path):
    run = _run_on_a_gpu(cuda, summary_program, str(tmp_path))
    assert run.returncode == 0 and run.stdout.strip().endswith("summaries: OK"), run.stdout + run.stderr
    assert "warning" not in run.stderr


@pytest.fixture(scope="module")
def graph_ring_program(cuda):
    return _nvcc(cuda, "cuda_graph_ring")


def test_each_replay_of_a_captured_graph_writes_the_eager_runs_record_byte_for_byte(cuda, graph_ring_program, tmp_path):
    run = _run_on_a_gpu(cuda, graph_ring_program, str(tmp_path))
    assert run.returncode == 0 and run.stdout.strip().endswith("graph ring: OK"), run.stdout + run.stderr
    assert "warning" not in run.stderr
