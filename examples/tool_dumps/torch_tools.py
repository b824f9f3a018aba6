"""HF transformers' model debugger and msprobe, each run as its documentation says, on a torch model.

hf_debugger(model, input_ids, out_dir)              # model_addition_debugger_context, use_repr=False
msprobe(model, input_ids, out_dir, "tensor")        # PrecisionDebugger at level L0, task tensor
msprobe(model, input_ids, out_dir, "statistics")    # task statistics, summary_mode md5 (CRC-32)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def hf_debugger(model: Any, input_ids: Any, out_dir: Path) -> Path:
    """One forward pass under transformers' model_addition_debugger_context, every layer kept and every
    tensor in safetensors files (use_repr=False); the dump's directory."""
    from transformers import model_addition_debugger_context

    with model_addition_debugger_context(model, debug_path=str(out_dir), do_prune_layers=False, use_repr=False):
        model.forward(input_ids=input_ids)
    return out_dir


def msprobe(model: Any, input_ids: Any, out_dir: Path, task: str) -> Path:
    """One forward pass under msprobe's PrecisionDebugger (PyTorch, level L0: module inputs, outputs and
    parameters) on the CPU; the dump directory ({out_dir}/step0/proc{pid}/dump.json)."""
    import torch
    from msprobe.pytorch import PrecisionDebugger

    out_dir.mkdir(parents=True, exist_ok=True)
    task_config: dict[str, Any] = {"scope": [], "list": [], "data_mode": ["all"]}
    if task == "statistics":
        task_config["summary_mode"] = "md5"  # the statistics plus a CRC-32 of each tensor's bytes
    config = {"task": task, "dump_path": str(out_dir), "rank": [], "step": [], "level": "L0", task: task_config}
    config_path = out_dir.parent / f"{out_dir.name}.msprobe-config.json"  # outside the dump: not a stray there
    config_path.write_text(json.dumps(config))
    debugger = PrecisionDebugger(config_path=str(config_path))
    debugger.start(model=model)
    with torch.no_grad():
        model(input_ids=input_ids)
    debugger.stop()
    debugger.step()
    return out_dir


def main(argv: list[str] | None = None) -> int:
    """`python -m examples.tool_dumps.torch_tools {hf|msprobe-tensor|msprobe-statistics} MODEL OUT`: msprobe's
    debugger is one per process, so each dump is made in a process of its own. MODEL is a GGUF file of the
    tiny Qwen2, or micro-clean / micro-planted (models.micro_model)."""
    p = argparse.ArgumentParser(prog="python -m examples.tool_dumps.torch_tools", description=main.__doc__)
    p.add_argument("tool", choices=("hf", "msprobe-tensor", "msprobe-statistics"))
    p.add_argument("model")
    p.add_argument("out", type=Path)
    args = p.parse_args(argv)
    from examples.tool_dumps.models import load

    model, ids = load(args.model)
    if args.tool == "hf":
        hf_debugger(model, ids, args.out)
    else:
        msprobe(model, ids, args.out, args.tool.split("-", 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
