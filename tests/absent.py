"""Run Python code in a child process where some installed packages are as absent as uninstalled ones."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

# Raises what the import system raises when no finder has the module, for the packages
# named and their submodules; runs before the code under test.
_BLOCKER = """
import importlib.abc, sys

class _Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {absent!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _Absent())
"""


def run_without(packages: Sequence[str], code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -c code args...` with `packages` (top-level import names) unimportable."""
    script = _BLOCKER.format(absent=set(packages)) + code
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300)
