"""Write the traces of one hunt: llama.cpp (the reference) and one engine under
test, and the `orchlog compare` options that line them up."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

from examples.hunt.traces import hf_trace, llama_trace, numpy_trace
from examples.numpy_engine.bugs import Bug
from examples.qwen2_tiny.make_model import make_tiny_model
from orchlog.compare import CompareOptions

TOLERANCES = Path(__file__).resolve().parent / "tolerances.toml"
ENGINES = ("numpy", "hf")
MAPS = {"numpy": [], "hf": ["hf_qwen2"]}  # the NumPy engine already uses llama.cpp's names
# llama.cpp's attention rows span its KV cache padded to 256 cells, the engines' the positions so far:
# those checkpoints are compared on their common window.
WINDOWS = ("kq*",)


@dataclasses.dataclass(frozen=True)
class Hunt:
    reference: Path  # llama.cpp's trace
    ours: Path  # the engine under test's trace
    maps: list[str]

    def options(self, **overrides: Any) -> CompareOptions:
        return CompareOptions(maps=self.maps, tolerances=str(TOLERANCES), windows=WINDOWS, **overrides)

    def arguments(self) -> list[str]:
        """`orchlog compare`'s arguments for the same comparison."""
        return [
            str(self.reference),
            str(self.ours),
            "--tolerances",
            str(TOLERANCES),
            *(arg for m in self.maps for arg in ("--map", m)),
            *(arg for w in WINDOWS for arg in ("--window", w)),
        ]

    def command(self) -> str:
        return "orchlog compare " + shlex.join(self.arguments())


def model_and_reference(directory: Path, program: Path | None = None) -> tuple[Path, Path]:
    """The tiny model and llama.cpp's trace of it (`program`, built when None) in `directory`, each made
    when not already there."""
    gguf = directory / "tiny-qwen2.gguf"
    if not gguf.exists():
        make_tiny_model(gguf)
    reference = directory / "llama.bin"
    if not reference.exists():
        llama_trace(gguf, reference, program=program)
    return gguf, reference


def prepare(directory: Path, engine: str = "numpy", bugs: Bug = Bug.NONE, program: Path | None = None) -> Hunt:
    """Makes the model and both traces in `directory` (llama.cpp's is reused when already there)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    if bugs and engine != "numpy":
        raise ValueError("only the NumPy engine has bugs to inject")
    gguf, reference = model_and_reference(directory, program)
    if engine == "hf":
        ours = hf_trace(gguf, directory / "hf.bin")
    else:
        ours = numpy_trace(gguf, directory / f"numpy{'-' + bugs.label if bugs else ''}.bin", bugs)
    return Hunt(reference, ours, MAPS[engine])
