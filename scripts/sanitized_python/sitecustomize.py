"""orchlog's native extensions from a sanitized build, for scripts/test.sh's asan-python stage.

With this directory on PYTHONPATH and ORCHLOG_SANITIZED_EXTENSIONS naming a build directory,
every interpreter started (pytest, its fuzz workers, CLI subprocesses: they inherit both
variables) imports orchlog._native and orchlog._kernels from that directory, built under
AddressSanitizer and UndefinedBehaviorSanitizer, instead of the .venv's release build.
The finder goes first on sys.meta_path, ahead of the editable install's. A module missing
from the directory is an ImportError, never a quiet fall back to the release build
(orchlog.kernels would then use its NumPy twins: the stage checks where both came from).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

_MODULES = ("orchlog._native", "orchlog._kernels")


class _SanitizedExtensions:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _MODULES:
            return None
        name = fullname.rpartition(".")[2]
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            origin = os.path.join(self.directory, name + suffix)
            if os.path.exists(origin):
                loader = importlib.machinery.ExtensionFileLoader(fullname, origin)
                return importlib.util.spec_from_file_location(fullname, origin, loader=loader)
        raise ImportError(f"{fullname}: no sanitized build in {self.directory}", name=fullname)


_directory = os.environ.get("ORCHLOG_SANITIZED_EXTENSIONS")
if _directory:
    sys.meta_path.insert(0, _SanitizedExtensions(_directory))
