"""The traces of a quantized hunt, each made once per directory: llama.cpp on
the quantized file (the reference), llama.cpp on the f32 file (the second
reference, whose difference from the first is the noise a correct engine may
show), and the NumPy engine on the quantized file's weights widened to f32."""

from __future__ import annotations

from pathlib import Path

from examples.hunt.traces import numpy_trace
from examples.llama_cpp.run import TraceSettings, build_programs, run_llama_cpp
from examples.numpy_engine.bugs import Bug
from examples.quantized.models import f32_model, quantized_model, widened_model
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO


def reference(directory: Path, kind: str, mode: str = "full", programs: Path | None = None) -> Path:
    """llama.cpp's trace of the model quantized to `kind` ("f32": the f32 file itself; "q8_0-widened": the
    q8_0 file's weights widened to f32)."""
    out = directory / f"llama-{kind}-{mode}.bin"
    if not out.exists():
        programs = programs or build_programs()
        if kind == "f32":
            model = f32_model(directory)
        elif kind.endswith("-widened"):
            model = widened_model(directory, kind.removesuffix("-widened"), programs)
        else:
            model = quantized_model(directory, kind, programs)
        run_llama_cpp(model, DEFAULT_SCENARIO, program=programs / "run_tokens", trace=TraceSettings(out, mode=mode))
    return out


def engine(directory: Path, kind: str, bugs: Bug = Bug.NONE, mode: str = "full", programs: Path | None = None) -> Path:
    """The NumPy engine's trace on the `kind` file's weights (dequantized), with `bugs`."""
    name = bugs.name.lower() if bugs else "clean"
    out = directory / f"numpy-{kind}-{name}-{mode}.bin"
    if not out.exists():
        model = f32_model(directory) if kind == "f32" else quantized_model(directory, kind, programs)
        numpy_trace(model, out, bugs, mode=mode)
    return out


__all__ = ["engine", "reference"]
