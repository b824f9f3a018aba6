"""The emitters that take part in the cross-language tests.

Each producer is a program that reads a tensor file like tensors.json and
logs every tensor in it through its emitter's public API, configured by the
ORCH_LOG_* env knobs alone, and exits 1 when its emitter counted an error.
Adding an emitter is one entry in PRODUCERS.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from tests.cargo import rust_example
from tests.native import build

PROGRAMS = Path(__file__).with_name("programs")


def cpp_program() -> Path:
    """programs/cross_language.cpp, over the header-only logger (and the C++ tests' JSON reader)."""
    support = build.ROOT / "native" / "cpp" / "tests"
    return build.build_cpp(
        PROGRAMS / "cross_language.cpp",
        f"-I{support}",
        f'-DORCHLOG_VECTORS_DIR="{build.ROOT / "schema" / "vectors"}"',
        inputs=[support / "support" / "json.hpp", support / "support" / "vectors.hpp"],
    )


@dataclasses.dataclass(frozen=True)
class Producer:
    language: str  # what the producer writes as the header's producer.language
    command: Callable[[Path], list[str]]  # the argv that logs a tensor file

    def __str__(self) -> str:
        return self.language


PRODUCERS = [
    Producer("rust", lambda tensors: [str(rust_example("cross_language")), str(tensors)]),
    Producer("cpp", lambda tensors: [str(cpp_program()), str(tensors)]),
    Producer("python", lambda tensors: [sys.executable, "-m", "tests.crosslang.python_producer", str(tensors)]),
    Producer(
        "c",
        lambda tensors: [
            sys.executable,
            "-m",
            "tests.crosslang.c_producer",
            str(build.build_c(PROGRAMS / "cross_language.c")),
            str(tensors),
        ],
    ),
]


@dataclasses.dataclass(frozen=True)
class Run:
    returncode: int
    stderr: str
    files: dict[str, bytes]  # name (relative to the output directory) -> bytes

    @property
    def warnings(self) -> list[str]:
        return self.stderr.splitlines()


def launch(producer: Producer, tensors: Path, knobs: Mapping[str, str | bytes], out_dir: Path) -> Run:
    """Run a producer with exactly `knobs` as its ORCH_LOG_* settings (bytes values for invalid UTF-8)."""
    env: dict[str | bytes, str | bytes] = {
        k: v for k, v in os.environ.items() if not k.startswith("ORCH_LOG_") and k != "SOURCE_DATE_EPOCH"
    }
    env.update(knobs)
    env_bytes = {os.fsencode(k): v if isinstance(v, bytes) else os.fsencode(v) for k, v in env.items()}
    done = subprocess.run(producer.command(tensors), env=env_bytes, capture_output=True, timeout=120, cwd=build.ROOT)
    files = {p.name: p.read_bytes() for p in sorted(out_dir.iterdir()) if p.is_file()}
    return Run(done.returncode, done.stderr.decode("utf-8", "replace"), files)


def run(producer: Producer, tensors: Path, knobs: Mapping[str, str | bytes], out_dir: Path) -> dict[str, bytes]:
    """Run a producer that must succeed silently; return the files it wrote."""
    done = launch(producer, tensors, knobs, out_dir)
    assert done.returncode == 0, f"{producer} exited {done.returncode}:\n{done.stderr}"
    assert done.stderr == "", f"{producer} warned:\n{done.stderr}"
    return done.files
