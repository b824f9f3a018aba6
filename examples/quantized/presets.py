"""Measure the shipped quantization presets (orchlog/tolerances/<type>.toml).

    python -m examples.quantized.presets [--out orchlog/tolerances] [--work DIR]

For each file type llama.cpp's quantizer makes (f16, bf16, q8_0, q6_k, q5_k_m, q4_k_m), llama.cpp runs the
model at Qwen2-0.5B widths (random weights of a seed the tests do not use) quantized to that type and the
f32 file it was made from, in full mode, over the example scenario; `orchlog calibrate` learns from that
pair the envelope of every checkpoint, stage and layer, with headroom 1.5 and a growth model for deeper
layers, and the file is written as the preset of that quantization. docs/noise.md gives the figures and
what a preset can and cannot promise (one model's noise stands in for another's).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from examples.llama_cpp.run import build_programs
from examples.quantized.models import f32_model
from examples.quantized.traces import reference
from examples.qwen2_tiny.weights import DEFAULT_SEED
from orchlog.compare.calibrate import calibrate_pairs, tolerance_file

SEED = DEFAULT_SEED + 1  # the tests measure the presets on DEFAULT_SEED's model: not the one they came from
HEADROOM = 1.5
# llama.cpp file type -> the preset it measures (orchlog/tolerances/presets.py maps weight types to these).
TYPES = {"f16": "f16", "bf16": "bf16", "q8_0": "q8_0", "q6_k": "q6_k", "q5_k_m": "q5_k", "q4_k_m": "q4_k"}
ROOT = Path(__file__).resolve().parents[2]


def measure(kind: str, directory: Path, programs: Path) -> str:
    """The preset file of llama.cpp file type `kind`."""
    f32_model(directory, SEED)
    quantized, exact = reference(directory, kind, programs=programs), reference(directory, "f32", programs=programs)
    calibration = calibrate_pairs([(str(quantized), str(exact))])
    calibration.sources = [(f"llama.cpp on {kind}", "llama.cpp on f32")]
    text = tolerance_file(calibration, HEADROOM)
    head = (
        f"# Preset {TYPES[kind]}: measured by `python -m examples.quantized.presets` (llama.cpp on a {kind} file of\n"
        f"# a random model at Qwen2-0.5B widths, 8 layers, seed {SEED}, against the f32 file; docs/noise.md).\n"
    )
    return head + text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.quantized.presets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=ROOT / "orchlog" / "tolerances", help="where the presets go")
    parser.add_argument("--work", type=Path, help="keep the models and traces here (default: a temporary directory)")
    parser.add_argument("--types", default=",".join(TYPES), help="comma-separated llama.cpp file types")
    args = parser.parse_args(argv)
    programs = build_programs()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for kind in filter(None, args.types.split(",")):
            path = args.out / f"{TYPES[kind]}.toml"
            path.write_text(measure(kind, work, programs), encoding="utf-8")
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
