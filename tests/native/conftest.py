"""Fixtures of the native tests: the C ABI loaded through cffi."""

from __future__ import annotations

import functools
import subprocess

import pytest

from tests.native import build

HEADER = build.INCLUDE / "orchlog" / "orchlog.h"


@functools.lru_cache(maxsize=1)
def c_declarations() -> str:
    """orchlog.h through the preprocessor, as the header invites FFI generators to read it."""
    return subprocess.run(
        ["gcc", "-E", "-P", "-DORCHLOG_CDEF_ONLY", str(HEADER)], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(scope="session")
def c_abi():
    """(ffi, lib) for liborchlog_c; its logger is its own, apart from orchlog._native's."""
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    ffi.cdef(c_declarations())
    return ffi, ffi.dlopen(str(build.c_library()))


@pytest.fixture(scope="session")
def cuda() -> tuple[str, str, str]:
    """nvcc, the CUDA include directory and libcudart (tests/native/cuda_toolkit.py); slow the first time."""
    from tests.native.cuda_toolkit import cuda_toolkit

    return cuda_toolkit()
