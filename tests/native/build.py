"""Build the C++ programs and the C library that native tests run.

Results are cached under .cache/ by a digest of their inputs (the headers,
the source, the flags), so only the first run after a change compiles.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "native" / "cpp" / "include"
PROGRAMS = Path(__file__).resolve().parent / "programs"
CACHE = ROOT / ".cache"
CXX = shutil.which("g++") or shutil.which("c++")


def _digest(paths: list[Path], extra: list[str]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p).encode())
        h.update(p.read_bytes())
    for e in extra:
        h.update(e.encode())
    return h.hexdigest()[:16]


def header_files() -> list[Path]:
    return [p for p in INCLUDE.rglob("*") if p.is_file()]


def build_cpp(
    source: Path, *flags: str, libs: tuple[str, ...] = (), compiler: str | None = None, inputs: list[Path] | None = None
) -> Path:
    """Compile one C++ source that includes orchlog (`libs` go after it); returns the executable."""
    compiler = compiler or CXX
    if compiler is None:
        raise RuntimeError("no C++ compiler on PATH")
    return _compile(
        compiler, source, ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE}", *flags], libs, inputs
    )


def build_c(source: Path, *flags: str, lib: Path | None = None) -> Path:
    """Compile one C99 source against orchlog.h and liborchlog_c (or `lib`); returns the executable."""
    lib = lib or c_library()
    return _compile(
        shutil.which("gcc") or "cc",
        source,
        ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{INCLUDE}", *flags],
        (str(lib), f"-Wl,-rpath,{lib.parent}"),
        [lib],
    )


def _compile(
    compiler: str,
    source: Path,
    argv_flags: list[str],
    libs: tuple[str, ...],
    inputs: list[Path] | None,
    tail: tuple[str, ...] = ("-pthread",),
    accept: Callable[[subprocess.CompletedProcess[str]], None] | None = None,
) -> Path:
    """The program built from `source`, cached by a digest of its inputs and the command; `accept` checks a
    fresh build's output (it raises to refuse it), and only an accepted build is kept."""
    stat = os.stat(shutil.which(compiler) or compiler)  # a compiler replaced in place (a new toolkit) rebuilds
    extra = [compiler, f"{stat.st_size}:{stat.st_mtime_ns}", *argv_flags, *libs, *tail]
    digest = _digest([source, *header_files(), *(inputs or [])], extra)
    out = CACHE / "test-programs" / f"{source.stem}-{digest}"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        done = subprocess.run(
            [compiler, *argv_flags, str(source), "-o", str(tmp), *libs, *tail], capture_output=True, text=True
        )
        try:
            if done.returncode != 0:
                raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
            if accept is not None:
                accept(done)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        tmp.rename(out)
    return out


def build_cuda(
    nvcc: str,
    source: Path,
    flags: list[str],
    libs: tuple[str, ...],
    inputs: list[Path],
    accept: Callable[[subprocess.CompletedProcess[str]], None],
) -> Path:
    """Compile one CUDA source with `nvcc` (cached as build_cpp's programs are: each takes nvcc half a
    minute or more); `accept` checks a fresh build's output, and only an accepted build is kept."""
    return _compile(nvcc, source, flags, libs, inputs, tail=(), accept=accept)


def program(name: str, *flags: str) -> Path:
    """A test program from tests/native/programs/, built with ORCH_LOGGING."""
    return build_cpp(PROGRAMS / name, "-DORCH_LOGGING", *flags)


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Holds a file lock beside a shared build directory: the suite's parallel workers build it in turn."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(directory.with_name(directory.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def c_library(cuda_root: str | None = None) -> Path:
    """liborchlog_c.so, built by the project's own CMake target (incrementally); with `cuda_root`
    (a CUDA toolkit), its CUDA entry points are built against the CUDA runtime (-DORCHLOG_C_CUDA=ON)."""
    build = CACHE / ("c-abi-cuda-build" if cuda_root else "c-abi-build")
    with locked(build):
        return _c_library(build, cuda_root)


def _c_library(build: Path, cuda_root: str | None) -> Path:
    cuda = ["-DORCHLOG_C_CUDA=ON", f"-DCUDAToolkit_ROOT={cuda_root}"] if cuda_root else []
    if not (build / "build.ninja").exists():
        subprocess.run(
            [
                "cmake",
                "-S",
                str(ROOT),
                "-B",
                str(build),
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DORCHLOG_BUILD_C_LIBRARY=ON",
                "-DORCHLOG_INSTALL=OFF",
                *cuda,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    subprocess.run(
        ["cmake", "--build", str(build), "--target", "orchlog_c", "-j", "2"], check=True, capture_output=True, text=True
    )
    (lib,) = [p for p in (build / "native" / "c").glob("liborchlog_c.so*") if not p.is_symlink()]
    return lib
