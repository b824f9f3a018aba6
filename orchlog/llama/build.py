"""Fetch llama.cpp from the llama-cpp-python sdist on PyPI and build its CPU library, once.

    python -m orchlog.llama.build          # prints the install prefix

The sdist vendors a pinned llama.cpp commit, so PyPI (reachable where GitHub
may not be) is the only source needed. The build is cached outside the
repository under `<cache>/llama.cpp/<version>-<flags hash>/`, where <cache> is
$ORCHLOG_CACHE_DIR, else $XDG_CACHE_HOME/orchlog, else ~/.cache/orchlog; a
finished build leaves a `COMPLETE` stamp, so a second call returns at once.
Progress goes to a terminal only; piped, the build is silent unless it fails.
The sdist must have the pinned SHA-256, and only plain files and directories
inside the vendored tree are extracted, on every Python (tarfile's "data"
filter is missing from some that requires-python allows).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from orchlog.progress import Progress

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
# The sdist's digest as PyPI serves it: a download (or a cached file) that differs is refused.
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
# The llama.cpp commit that llama-cpp-python 0.3.36 vendors (its CHANGELOG).
LLAMA_CPP_COMMIT = "0c1e57098"

# Why each flag:
#  - Release, shared libraries, installed with a CMake package config so that
#    examples/llama_cpp/CMakeLists.txt can find_package(llama).
#  - GGML_NATIVE=OFF: the cached library must not depend on the exact CPU that
#    built it; the x86-64 default instruction set of this llama.cpp (SSE4.2,
#    AVX, AVX2, FMA, F16C, BMI2) is used instead.
#  - no OpenMP (ggml's own thread pool), no BLAS, no ccache: fewer system
#    dependencies, and matrix products stay in ggml's own f32 kernels.
#  - only the library: no tools, examples, tests, server, common, OpenSSL.
#  - RPATH $ORIGIN: the installed libllama finds the libggml next to it, for
#    programs whose linker dropped libggml as not directly needed.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",
    "-DCMAKE_INSTALL_RPATH=$ORIGIN",
    "-DGGML_NATIVE=OFF",
    "-DGGML_OPENMP=OFF",
    "-DGGML_BLAS=OFF",
    "-DGGML_CCACHE=OFF",
    "-DLLAMA_BUILD_COMMON=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_TOOLS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_OPENSSL=OFF",
)

DEFAULT_JOBS = 2  # the shared development machines have two cores


class BuildError(RuntimeError):
    """Fetching or building llama.cpp failed; the message says where the log is."""


@dataclass(frozen=True)
class LlamaCppBuild:
    """A finished llama.cpp build: `prefix` holds include/, lib/ and lib/cmake/llama."""

    prefix: Path
    version: str
    commit: str
    flags: tuple[str, ...]
    build_seconds: float


def cache_root() -> Path:
    """Where orchlog keeps what it builds outside a checkout."""
    if os.environ.get("ORCHLOG_CACHE_DIR"):
        return Path(os.environ["ORCHLOG_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "orchlog"


def build_key(version: str = LLAMA_CPP_PYTHON_VERSION, flags: tuple[str, ...] = CMAKE_FLAGS) -> str:
    digest = hashlib.sha256("\n".join(flags).encode()).hexdigest()[:12]
    return f"{version}-{digest}"


def ensure_llama_cpp(jobs: int = DEFAULT_JOBS, quiet: bool = False) -> LlamaCppBuild:
    """Return the cached build, fetching and building it first when missing.

    Safe to call from several processes at once: a file lock serialises the
    build and the later callers find it finished.
    """
    root = cache_root() / "llama.cpp"
    work = root / build_key()
    work.mkdir(parents=True, exist_ok=True)
    with open(root / f"{work.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = work / "COMPLETE"
        if not stamp.exists():
            started = time.monotonic()
            sdist = _fetch_sdist(root / "sdist", quiet)
            fetched = time.monotonic()
            source = _extract_vendored_source(sdist, work / "src")
            _cmake_build(source, work, jobs, quiet)
            # Only the install prefix is used from here on; the sdist stays for a rebuild.
            shutil.rmtree(work / "src")
            shutil.rmtree(work / "build")
            stamp.write_text(
                json.dumps(
                    {
                        "version": LLAMA_CPP_PYTHON_VERSION,
                        "commit": LLAMA_CPP_COMMIT,
                        "flags": list(CMAKE_FLAGS),
                        "jobs": jobs,
                        "fetch_seconds": round(fetched - started, 1),
                        "build_seconds": round(time.monotonic() - fetched, 1),
                    },
                    indent=1,
                )
                + "\n"
            )
        info = json.loads(stamp.read_text())
    return LlamaCppBuild(
        prefix=work / "install",
        version=info["version"],
        commit=info["commit"],
        flags=tuple(info["flags"]),
        build_seconds=info["build_seconds"],
    )


def build_cmake_project(source: Path, build_dir: Path, defines: dict[str, str], jobs: int = DEFAULT_JOBS) -> Path:
    """Configures `source` into `build_dir` once (with -D`defines`) and brings it up to date; returns
    `build_dir`. A file lock beside the directory makes concurrent callers (parallel test workers, two
    shells) take turns: two CMake configures of one directory at once break each other's checks."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir.with_name(build_dir.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (build_dir / "CMakeCache.txt").exists():
            _run_cmake(
                ["cmake", "-S", str(source), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release"]
                + [f"-D{name}={value}" for name, value in defines.items()]
            )
        _run_cmake(["cmake", "--build", str(build_dir), "--parallel", str(jobs)])
    return build_dir


def _run_cmake(cmd: list[str]) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise BuildError(f"{cmd[0]} is not installed; install CMake (3.18 or newer)") from None
    if proc.returncode != 0:
        tail = "".join((proc.stdout + proc.stderr).splitlines(keepends=True)[-30:])
        raise BuildError(f"`{' '.join(cmd[:3])} ...` failed:\n{tail}")


def vendored_source(quiet: bool = True) -> Path:
    """The vendored llama.cpp tree of the pinned sdist, unpacked once beside the build cache (for
    programs built from llama.cpp's own sources, such as its common/ tensor printer)."""
    root = cache_root() / "llama.cpp"
    return _extract_vendored_source(_fetch_sdist(root / "sdist", quiet), root / f"src-{LLAMA_CPP_PYTHON_VERSION}")


def _say(quiet: bool, message: str) -> None:
    if not quiet and sys.stderr.isatty():
        print(f"llama.cpp: {message}", file=sys.stderr)


def _fetch_sdist(directory: Path, quiet: bool) -> Path:
    name = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    target = directory / name
    if target.exists():
        check_sha256(target)
        return target
    directory.mkdir(parents=True, exist_ok=True)
    _say(quiet, f"downloading the llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} sdist from PyPI (~75 MB)")
    show = not quiet and sys.stderr.isatty()
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        # Only this package as an sdist, and no isolated build env: `--no-binary :all:`
        # would make pip build the sdist's own build requirements (CMake!) from source
        # just to read its metadata.
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            "llama-cpp-python",
            "--no-build-isolation",
            "--no-deps",
            "--dest",
            tmp,
            f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}",
        ]
        if not show:
            cmd += ["--quiet", "--progress-bar", "off"]
        proc = subprocess.run(
            cmd, stdout=None if show else subprocess.PIPE, stderr=None if show else subprocess.STDOUT, text=True
        )
        if proc.returncode != 0:
            raise BuildError(f"pip download of llama-cpp-python failed:\n{proc.stdout or ''}")
        check_sha256(Path(tmp) / name)
        os.replace(Path(tmp) / name, target)
    return target


def check_sha256(sdist: Path, expected: str = SDIST_SHA256) -> None:
    """BuildError unless the file's SHA-256 is the pinned one."""
    digest = hashlib.sha256()
    with open(sdist, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise BuildError(
            f"{sdist} has SHA-256 {digest.hexdigest()}, not the pinned {expected}: refusing to build from it "
            "(delete it to download it again)"
        )


def safe_members(members: list[tarfile.TarInfo], prefix: str) -> list[tarfile.TarInfo]:
    """The members under prefix, renamed relative to it; BuildError for anything but plain files and
    directories with a relative path that stays inside (links, devices, `..`, absolute names).

    What tarfile's "data" filter enforces, checked here for every Python: 3.10 and 3.11 before
    their security releases have no filter, and extractall would then follow an archive's links
    out of the destination."""
    out = []
    for member in members:
        if not member.name.startswith(prefix):
            continue
        name = member.name[len(prefix) :]
        parts = Path(name).parts
        if not (member.isfile() or member.isdir()) or name.startswith("/") or ".." in parts:
            raise BuildError(f"refusing to extract {member.name!r} from the sdist: not a plain file inside the tree")
        member.name = name
        member.mode &= 0o755  # no set-uid, set-gid or world-writable bits
        out.append(member)
    return out


def _extract_vendored_source(sdist: Path, destination: Path) -> Path:
    """Unpack only vendor/llama.cpp from the sdist (it is most of the archive anyway)."""
    if (destination / "CMakeLists.txt").exists():
        return destination
    shutil.rmtree(destination, ignore_errors=True)
    prefix = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}/vendor/llama.cpp/"
    tmp = Path(tempfile.mkdtemp(dir=destination.parent, prefix=".src-"))
    try:
        with tarfile.open(sdist) as archive:
            members = safe_members(archive.getmembers(), prefix)
            if not members:
                raise BuildError(f"{sdist} holds no {prefix}")
            if hasattr(tarfile, "data_filter"):
                archive.extractall(tmp, members=members, filter="data")
            else:
                archive.extractall(tmp, members=members)
        os.replace(tmp, destination)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return destination


# Build progress as Ninja ("[12/345] Building ...") and Make ("[ 42%] Building ...") print it.
_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\]")
_MAKE_PERCENT = re.compile(r"^\[\s*(\d+)%\]")


def _build_progress(line: str) -> tuple[int, int] | None:
    """(done, total) from one line of build output, or None when the line has none."""
    if step := _NINJA_STEP.match(line):
        return int(step[1]), int(step[2])
    if percent := _MAKE_PERCENT.match(line):
        return int(percent[1]), 100
    return None


def _cmake_build(source: Path, work: Path, jobs: int, quiet: bool) -> None:
    build, install, log_path = work / "build", work / "install", work / "build.log"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    with open(log_path, "w") as log:
        _say(quiet, f"configuring {LLAMA_CPP_COMMIT} (log: {log_path})")
        _run_logged(
            [
                "cmake",
                "-S",
                str(source),
                "-B",
                str(build),
                *generator,
                *CMAKE_FLAGS,
                f"-DCMAKE_INSTALL_PREFIX={install}",
            ],
            log,
            log_path,
        )
        with Progress(f"llama.cpp: building with -j{jobs}", quiet=quiet, unit=" steps") as progress:

            def on_line(line: str) -> None:
                if found := _build_progress(line):
                    progress.total = found[1]
                    progress.advance(found[0] - progress.done)

            _run_logged(["cmake", "--build", str(build), "--parallel", str(jobs)], log, log_path, on_line)
        _run_logged(["cmake", "--install", str(build)], log, log_path)
    _say(quiet, f"installed into {install}")


def _run_logged(cmd: list[str], log: TextIO, log_path: Path, on_line: Callable[[str], None] | None = None) -> None:
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        log.write(line)
        log.flush()  # so that `tail -f build.log` follows a long build
        if on_line:
            on_line(line)
    if proc.wait() != 0:
        tail = "".join(log_path.read_text(errors="replace").splitlines(keepends=True)[-30:])
        raise BuildError(f"`{' '.join(cmd[:3])} ...` failed (exit {proc.returncode}); full log: {log_path}\n{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m orchlog.llama.build",
        description="Fetch and build the llama.cpp CPU library (cached); print its install prefix.",
    )
    parser.add_argument("--jobs", "-j", type=int, default=DEFAULT_JOBS, help="parallel compile jobs (default 2)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress even on a terminal")
    args = parser.parse_args(argv)
    try:
        build = ensure_llama_cpp(jobs=args.jobs, quiet=args.quiet)
    except BuildError as exc:
        print(f"llama.cpp: error: {exc}", file=sys.stderr)
        return 2
    print(build.prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
