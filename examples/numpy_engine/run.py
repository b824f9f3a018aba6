"""Run the scenario through the NumPy engine, clean or with bugs.

python -m examples.numpy_engine.run tiny-qwen2.gguf logits-numpy.npy [--bugs no_qkv_bias,...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from examples.numpy_engine.bugs import ALL_BUGS, Bug
from examples.numpy_engine.engine import NumpyQwen2Engine
from examples.numpy_engine.model import load_model
from examples.numpy_engine.observe import Observer
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario


def run_numpy_engine(
    gguf_path: str | Path, scenario: Scenario = DEFAULT_SCENARIO, bugs: Bug = Bug.NONE, observe: Observer | None = None
) -> np.ndarray:
    """Logits as float32, shape (n_positions, n_vocab), row i = position i."""
    return NumpyQwen2Engine(load_model(gguf_path, bugs), bugs, observe).run(scenario)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.numpy_engine.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("model", type=Path, help="tiny Qwen2 GGUF (examples.qwen2_tiny.make_model)")
    parser.add_argument("out", type=Path, help="logits as .npy, (n_positions, n_vocab) float32")
    parser.add_argument("--bugs", default="", help="comma-separated, from: " + ", ".join(b.label for b in ALL_BUGS))
    args = parser.parse_args(argv)
    try:
        bugs = Bug.parse(args.bugs)
    except ValueError as exc:
        parser.error(str(exc))
    np.save(args.out, run_numpy_engine(args.model, bugs=bugs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
