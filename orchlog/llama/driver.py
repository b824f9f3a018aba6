"""The driver program (run_tokens.cpp beside this file) built against a llama.cpp: the pinned one
(build.py) or the user's own install prefix, for CPU or CUDA alike.

The build lives under the cache (`<cache>/llama.cpp/drivers/<hash of the llama.cpp prefix and the
orchlog headers' directory>/`), configured once with CMake and rebuilt by CMake when a source or
header changes; a file lock lets concurrent callers wait for one build.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from orchlog.llama.build import LLAMA_CPP_COMMIT, BuildError, build_cmake_project, cache_root, ensure_llama_cpp

DRIVER_DIR = Path(__file__).resolve().parent
PROGRAM = "run_tokens"


@dataclass(frozen=True)
class LlamaCpp:
    """A llama.cpp install prefix to build against (include/llama.h, lib*/cmake/llama)."""

    prefix: Path
    origin: str  # "pinned <commit>" or "user <prefix>": written into the trace's header


def pinned_llama_cpp(jobs: int, quiet: bool) -> LlamaCpp:
    """The pinned llama.cpp, built on first use (minutes; cached)."""
    return LlamaCpp(ensure_llama_cpp(jobs=jobs, quiet=quiet).prefix, f"pinned {LLAMA_CPP_COMMIT}")


def user_llama_cpp(directory: str | Path) -> LlamaCpp:
    """The user's own llama.cpp: an install prefix, what `cmake --install build --prefix DIR` writes."""
    prefix = Path(directory).expanduser().resolve()
    if not prefix.is_dir():
        raise BuildError(f"--llama-cpp {directory}: no such directory")
    configs = [
        *prefix.glob("lib*/cmake/llama/llama-config.cmake"),
        *prefix.glob("lib/*/cmake/llama/llama-config.cmake"),
    ]
    if not (prefix / "include" / "llama.h").is_file() or not configs:
        raise BuildError(
            f"--llama-cpp {directory}: not a llama.cpp install prefix (it needs include/llama.h and "
            "lib/cmake/llama/llama-config.cmake); in your llama.cpp checkout run "
            f"`cmake --install build --prefix {directory}` and give that directory"
        )
    return LlamaCpp(prefix, f"user {prefix}")


def orchlog_include_dir() -> Path:
    """The directory holding orchlog/ggml.hpp: in a checkout, native/cpp/include (an editable install's
    copy beside the extension is only as new as its last build); else the installed package's
    orchlog/include, beside the compiled extension."""
    import orchlog._native as native

    package = Path(__file__).resolve().parent.parent
    for candidate in (
        package.parent / "native" / "cpp" / "include",
        package / "include",
        Path(native.__file__).resolve().parent / "include",
    ):
        if (candidate / "orchlog" / "ggml.hpp").is_file():
            return candidate
    raise BuildError("orchlog's C++ headers are not installed with this package (reinstall orchlog)")


def build_driver(llama: LlamaCpp, jobs: int = 2) -> Path:
    """The driver built against `llama` (configured once, brought up to date by CMake each call)."""
    include = orchlog_include_dir()
    key = hashlib.sha256(f"{llama.prefix}\n{include}\n{DRIVER_DIR}".encode()).hexdigest()[:16]
    defines = {"CMAKE_PREFIX_PATH": str(llama.prefix), "ORCHLOG_INCLUDE_DIR": str(include)}
    return build_cmake_project(DRIVER_DIR, cache_root() / "llama.cpp" / "drivers" / key, defines, jobs) / PROGRAM
