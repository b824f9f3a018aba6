"""Run the tiny Qwen2 through llama.cpp, HF transformers and the NumPy engine
(clean, then with each bug) and print how far apart their logits are.

    python -m examples.agreement [--seed N]

The figures in docs/llama-cpp.md come from this command. The first run builds
llama.cpp (cached, a few minutes on two cores).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from examples import cli
from examples.llama_cpp.run import run_llama_cpp
from examples.numpy_engine.bugs import ALL_BUGS
from examples.numpy_engine.run import run_numpy_engine
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.make_model import make_tiny_model
from examples.qwen2_tiny.run_hf import run_hf
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from orchlog.llama.build import BuildError


def max_abs_difference(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Largest |a - b| over all positions, over the prompt pass, over the decode steps."""
    n_prompt = len(DEFAULT_SCENARIO.prompt)
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return float(diff.max()), float(diff[:n_prompt].max()), float(diff[n_prompt:].max())


def report(seed: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        model = make_tiny_model(Path(tmp) / "tiny-qwen2.gguf", seed)
        llama, hf, numpy_clean = run_llama_cpp(model), run_hf(model), run_numpy_engine(model)
        buggy = {bug: run_numpy_engine(model, bugs=bug) for bug in ALL_BUGS}
    rows = [
        ("HF vs llama.cpp", hf, llama),
        ("NumPy vs llama.cpp", numpy_clean, llama),
        ("NumPy vs HF", numpy_clean, hf),
    ]
    rows += [(f"NumPy+{bug.label} vs llama.cpp", logits, llama) for bug, logits in buggy.items()]
    lines = [
        f"tiny Qwen2, seed {seed}: {TINY.n_layer} layers, n_embd {TINY.n_embd}, {TINY.n_head} heads, "
        f"{TINY.n_head_kv} KV heads, n_ff {TINY.n_ff}, vocab {TINY.n_vocab}; "
        f"{len(DEFAULT_SCENARIO.prompt)} prompt tokens + {len(DEFAULT_SCENARIO.decode)} decode steps",
        f"{'max |logit difference|':48} {'all':>9} {'prompt':>9} {'decode':>9}",
    ]
    for label, a, b in rows:
        lines.append(f"{label:48} " + " ".join(f"{d:9.2e}" for d in max_abs_difference(a, b)))
    same_top = (hf.argmax(-1) == llama.argmax(-1)).all() and (numpy_clean.argmax(-1) == llama.argmax(-1)).all()
    lines.append(f"top-1 token identical at every position (llama.cpp, HF, NumPy): {'yes' if same_top else 'NO'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("examples.agreement", __doc__)
    cli.seed_option(parser)
    args = parser.parse_args(argv)
    try:
        print(report(args.seed))
    except BuildError as exc:
        return cli.error("llama.cpp", exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
