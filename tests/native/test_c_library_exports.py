"""liborchlog_c exports the C ABI and nothing else (no std:: instantiations to clash with the host's)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.native import build

pytestmark = pytest.mark.skipif(shutil.which("nm") is None, reason="no nm")


def test_only_orchlog_functions_are_exported():
    out = subprocess.run(
        ["nm", "-D", "--defined-only", str(build.c_library())], capture_output=True, text=True, check=True
    ).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert names and all(n.startswith("orchlog_") for n in names), [n for n in names if not n.startswith("orchlog_")]
    assert "orchlog_log" in names
