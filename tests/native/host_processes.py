"""Host processes for the crash and full-disk tests: a C++ program, a C program
and a Python script that log a known tensor per record until told to stop."""

from __future__ import annotations

import os
import sys

import blake3
import numpy as np

from tests.native import build

# What record i holds, in both hosts: 4 x 1024 f32, value i + k/1000 at flat index k.
SHAPE = (4, 1024)


def tensor(i: int) -> np.ndarray:
    return (np.float32(i) + np.arange(4 * 1024, dtype=np.float32) * np.float32(0.001)).reshape(SHAPE)


PYTHON_HOST = r"""
import sys
import numpy as np
import orchlog
count = int(sys.argv[1])
i = 0
while count < 0 or i < count:
    x = (np.float32(i) + np.arange(4 * 1024, dtype=np.float32) * np.float32(0.001)).reshape(4, 1024)
    orchlog.log("hidden", x, token_idx=i, layer=i % 24, stage="out", step=0)
    i += 1
print("done")
"""


def cpp_host(count: int = -1) -> list[str]:
    return [str(build.program("log_loop.cpp")), *([str(count)] if count >= 0 else [])]


def c_host(count: int = -1) -> list[str]:
    """programs/log_loop.c: the same loop through the C ABI (liborchlog_c)."""
    return [str(build.build_c(build.PROGRAMS / "log_loop.c")), *([str(count)] if count >= 0 else [])]


def python_host(count: int = -1) -> list[str]:
    return [sys.executable, "-c", PYTHON_HOST, str(count)]


HOSTS = {"cpp": cpp_host, "c": c_host, "python": python_host}


def env(**knobs: str) -> dict[str, str]:
    """The environment minus any ORCH_LOG_* of the caller, plus `knobs`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_LOG_")}
    return {**base, **knobs}


def blake3_of(i: int) -> str:
    return blake3.blake3(tensor(i).tobytes()).hexdigest()
