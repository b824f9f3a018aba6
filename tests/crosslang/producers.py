"""The emitters that take part in the cross-language tests.

Each producer is a program that reads a tensor file like tensors.json and
logs every tensor in it through its emitter's public API, configured by the
ORCH_LOG_* env knobs alone. Adding an emitter is one entry in PRODUCERS:

    Producer("cpp", lambda tensors: [str(cpp_cross_language_binary), str(tensors)])
    Producer("python", lambda tensors: [sys.executable, "-m", "tests.crosslang.python_producer", str(tensors)])
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path
from typing import Callable, Mapping

from tests.cargo import rust_example


@dataclasses.dataclass(frozen=True)
class Producer:
    language: str  # what the producer writes as the header's producer.language
    command: Callable[[Path], list[str]]  # the argv that logs a tensor file

    def __str__(self) -> str:
        return self.language


PRODUCERS = [
    Producer("rust", lambda tensors: [str(rust_example("cross_language")), str(tensors)]),
]


def run(producer: Producer, tensors: Path, knobs: Mapping[str, str], out_dir: Path) -> dict[str, bytes]:
    """Run a producer with exactly `knobs` as its ORCH_LOG_* settings; return the files it wrote."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_LOG_") and k != "SOURCE_DATE_EPOCH"}
    env.update(knobs)
    done = subprocess.run(producer.command(tensors), env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{producer} exited {done.returncode}:\n{done.stderr}"
    assert done.stderr == "", f"{producer} warned:\n{done.stderr}"
    return {p.name: p.read_bytes() for p in sorted(out_dir.iterdir()) if p.is_file()}
