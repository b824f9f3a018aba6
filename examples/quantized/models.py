"""The model files of the quantized hunt: random weights at Qwen2-0.5B widths
written as an f32 GGUF, and that file quantized by llama.cpp's own quantizer.

    python -m examples.quantized.models DIR [--types q8_0,q4_k_m]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from examples import cli
from examples.llama_cpp.run import build_programs
from examples.quantized.config import QWEN2_05B_WIDTHS
from examples.qwen2_tiny.gguf_file import read_gguf_tensors, write_gguf
from examples.qwen2_tiny.weights import DEFAULT_SEED, make_weights

F32_NAME = "qwen2-widths-f32.gguf"


def f32_model(directory: Path, seed: int = DEFAULT_SEED) -> Path:
    """The f32 file (made once per directory)."""
    path = directory / F32_NAME
    if not path.exists():
        write_gguf(path, make_weights(QWEN2_05B_WIDTHS, seed), QWEN2_05B_WIDTHS)
    return path


def quantized_model(directory: Path, kind: str, programs: Path | None = None) -> Path:
    """The f32 file quantized to `kind` (q8_0, q4_k_m, f16, ...) by llama.cpp (made once per directory)."""
    source = f32_model(directory)
    path = directory / F32_NAME.replace("f32", kind)
    if not path.exists():
        program = (programs or build_programs()) / "quantize"
        partial = path.with_suffix(".part")
        proc = subprocess.run([str(program), str(source), str(partial), kind], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"quantize {kind} failed (exit {proc.returncode}):\n{proc.stderr}")
        partial.rename(path)
    return path


def widened_model(directory: Path, kind: str, programs: Path | None = None) -> Path:
    """The `kind` file's weights widened back to f32 (made once per directory): the same numbers the quantized
    reference multiplies by, without its quantized activations. llama.cpp on this file differs from llama.cpp
    on the quantized one by exactly what an engine computing in f32 on those weights may differ by."""
    path = directory / F32_NAME.replace("f32", f"{kind}-widened")
    if not path.exists():
        weights = read_gguf_tensors(quantized_model(directory, kind, programs), dequantize=True)
        partial = path.with_suffix(".part")
        write_gguf(partial, weights, QWEN2_05B_WIDTHS)
        partial.rename(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("examples.quantized.models", __doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--types", default="q8_0", help="comma-separated llama.cpp file types (default q8_0)")
    args = parser.parse_args(argv)
    args.directory.mkdir(parents=True, exist_ok=True)
    print(f32_model(args.directory))
    for kind in filter(None, args.types.split(",")):
        print(quantized_model(args.directory, kind))
    return 0


if __name__ == "__main__":
    sys.exit(main())
