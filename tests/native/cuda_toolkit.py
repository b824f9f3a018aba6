"""A CUDA toolkit to compile against, on machines with or without a GPU: nvcc
from PATH, else NVIDIA's PyPI wheels installed once into .cache/cuda-toolkit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.native.build import CACHE

TOOLKIT = CACHE / "cuda-toolkit"
# One CUDA release, pinned so that every checkout compiles with the same nvcc.
WHEELS = [
    "nvidia-cuda-nvcc==13.5.37",
    "nvidia-nvvm==13.5.37",
    "nvidia-cuda-runtime==13.5.37",
    "nvidia-cuda-crt==13.5.37",
    # include/cccl: CMake (4.4 on) names it among CUDA::cudart's include directories for CUDA 13 and
    # refuses to generate when it is missing.
    "nvidia-cuda-cccl==13.3.5.0.6",
]


def _toolkit_from_wheels() -> tuple[Path, Path, Path]:
    root = TOOLKIT / "nvidia" / "cu13"
    if not all((root / part).exists() for part in ("bin/nvcc", "include/cccl")):
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--upgrade", "--no-deps", "--target", str(TOOLKIT), *WHEELS],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if proc.returncode != 0:
            pytest.skip(f"nvcc is not on PATH and NVIDIA's wheels could not be installed: {proc.stderr.strip()[-300:]}")
        for tool in [*(root / "bin").iterdir(), *(root / "nvvm" / "bin").iterdir()]:
            if tool.is_file():
                tool.chmod(0o755)
    cudart = next((root / "lib").glob("libcudart.so.*"))
    link = root / "lib" / "libcudart.so"  # the name CMake's FindCUDAToolkit looks for
    if not link.exists():
        link.symlink_to(cudart.name)
    return root / "bin" / "nvcc", root / "include", cudart


def cuda_toolkit() -> tuple[str, str, str]:
    """nvcc, the CUDA include directory and libcudart: from PATH, else from the wheels (or the caller skips)."""
    nvcc = shutil.which("nvcc")
    if nvcc:
        home = Path(nvcc).resolve().parent.parent
        cudart = next(iter(sorted((home / "lib64").glob("libcudart.so*"))), None)
        if cudart is None:
            pytest.skip(f"nvcc at {nvcc} but no libcudart under {home}/lib64")
        return nvcc, str(home / "include"), str(cudart)
    nvcc_path, include, cudart_path = _toolkit_from_wheels()
    return str(nvcc_path), str(include), str(cudart_path)
