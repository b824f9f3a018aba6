"""The traces of a quantized hunt, each made once per directory: llama.cpp on
the quantized file (the reference), llama.cpp on the f32 file and on the
quantized file's weights widened to f32 (second references, whose difference
from the first is the noise a correct engine may show), and the NumPy engine
on the quantized file's weights widened to f32, clean or with bugs.

Each is written in full or summary mode; with `select` (an ORCH_LOG_SELECT
text), only those records: what the rerun command of an undecided pair runs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from examples.hunt.traces import numpy_trace
from examples.llama_cpp.run import TraceSettings, build_programs, run_llama_cpp
from examples.numpy_engine.bugs import Bug
from examples.quantized.models import f32_model, quantized_model, widened_model
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO


def model_file(directory: Path, kind: str, programs: Path | None = None) -> Path:
    """The model of `kind`: "f32" (the f32 file), "q8_0" (llama.cpp's quantizer's file of that type, any it
    knows), "q8_0-widened" (that file's weights widened to f32)."""
    if kind == "f32":
        return f32_model(directory)
    if kind.endswith("-widened"):
        return widened_model(directory, kind.removesuffix("-widened"), programs)
    return quantized_model(directory, kind, programs)


def _name(stem: str, mode: str, select: str) -> str:
    return f"{stem}-{mode}" + (f"-{hashlib.sha256(select.encode()).hexdigest()[:12]}" if select else "") + ".bin"


def reference(directory: Path, kind: str, mode: str = "full", select: str = "", programs: Path | None = None) -> Path:
    """llama.cpp's trace of the model of `kind` (model_file)."""
    out = directory / _name(f"llama-{kind}", mode, select)
    if not out.exists():
        programs = programs or build_programs()
        run_llama_cpp(
            model_file(directory, kind, programs),
            DEFAULT_SCENARIO,
            program=programs / "run_tokens",
            trace=TraceSettings(out, mode=mode, select=select),
        )
    return out


def engine(
    directory: Path, kind: str, bugs: Bug = Bug.NONE, mode: str = "full", select: str = "", programs: Path | None = None
) -> Path:
    """The NumPy engine's trace on the weights of the model of `kind` (widened to f32), with `bugs`."""
    out = directory / _name(f"numpy-{kind}-{bugs.label if bugs else 'clean'}", mode, select)
    if not out.exists():
        numpy_trace(model_file(directory, kind, programs), out, bugs, mode=mode, select=select)
    return out
