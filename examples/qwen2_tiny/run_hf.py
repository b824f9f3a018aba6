"""Run the scenario through HF transformers: a prompt pass, then decode steps
that reuse the KV cache, collecting the logits of every position.

    python -m examples.qwen2_tiny.run_hf tiny-qwen2.gguf logits-hf.npy
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
from transformers import Qwen2ForCausalLM

from examples import cli
from examples.qwen2_tiny.hf_model import load_hf_model
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario


def run_hf(
    gguf_path: str | Path, scenario: Scenario = DEFAULT_SCENARIO, model: Qwen2ForCausalLM | None = None
) -> np.ndarray:
    """Logits as float32, shape (n_positions, n_vocab), row i = position i.

    Pass `model` to run one already loaded (e.g. with orchlog.torch hooks attached).
    """
    model = model if model is not None else load_hf_model(gguf_path)
    rows = []
    cache = None
    with torch.no_grad():
        for call in scenario.calls():
            out = model(input_ids=torch.tensor([call.tokens]), past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            rows.append(out.logits[0].to(torch.float32).numpy())
    return np.concatenate(rows, axis=0)


def main(argv: list[str] | None = None) -> int:
    args = cli.model_and_out(cli.parser("examples.qwen2_tiny.run_hf", __doc__), cli.LOGITS).parse_args(argv)
    np.save(args.out, run_hf(args.model))
    return 0


if __name__ == "__main__":
    sys.exit(main())
