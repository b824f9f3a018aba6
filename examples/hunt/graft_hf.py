"""HF transformers grafted from llama.cpp's trace through orchlog.torch, stage by stage.

    python -m examples.hunt.graft_hf                 # the tiny Qwen2; prints the per-stage graft report
    python -m examples.hunt.graft_hf --out /tmp/hf   # keep the model and traces

One run per stage S that orchlog.torch can hook (hf_qwen2.toml's names): every other stage grafted from
llama.cpp, S logged as usual, so S's record measures what HF's S itself computes differently from
llama.cpp's, at every layer at once. The plain run (nothing grafted) gives the end-to-end errors.
docs/graft.md quotes the figures this prints.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from examples.hunt.run import TOLERANCES, WINDOWS, model_and_reference
from examples.hunt.traces import HF_INPUTS, HF_OUTPUTS
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from orchlog.compare import CompareOptions
from orchlog.graft_report.result import GraftReport, graft_report
from orchlog.report import render_markdown

# llama.cpp's names of what HF_OUTPUTS and HF_INPUTS hook, through hf_qwen2.toml, in execution order. HF
# has no module for Q and K after RoPE: Qcur and Kcur are their projections plus bias (stage "add").
HF_STAGES = (
    "embd",
    "attn_norm",
    "Qcur",
    "Kcur",
    "Vcur",
    "kqv_out",
    "attn_out",
    "ffn_inp",
    "ffn_norm",
    "ffn_gate",
    "ffn_up",
    "ffn_swiglu",
    "ffn_out",
    "l_out",
    "result_norm",
    "result_output",
)


def all_but(stage: str) -> str:
    """The selector that grafts every stage but `stage` (clauses on one key are ORed)."""
    return ",".join(f"checkpoint={s}" for s in HF_STAGES if s != stage)


def grafted_hf_trace(gguf: Path, reference: Path, out: Path, select: str | None) -> Path:
    """HF's modules as graft points under llama.cpp's names, grafted from `reference` where `select` says
    (None: nothing grafted, a plain run whose records carry llama.cpp's names)."""
    import orchlog.torch
    from examples.qwen2_tiny.hf_model import load_hf_model
    from examples.qwen2_tiny.run_hf import run_hf

    model = load_hf_model(gguf)
    orchlog.configure(
        path=str(out), mode="full", team="hf-grafted", select="", graft_from=str(reference), graft_select=select
    )
    try:
        with orchlog.torch.attach(model, HF_OUTPUTS, inputs=HF_INPUTS, graft=True, graft_map="hf_qwen2"):
            run_hf(gguf, DEFAULT_SCENARIO, model=model)
    finally:
        orchlog.close()
    return out


def hf_graft_report(directory: Path, program: Path | None = None) -> GraftReport:
    """The tiny model, llama.cpp's trace (both reused when there), HF's plain run and one grafted run per
    stage, in `directory`; the graft report over them."""
    gguf, reference = model_and_reference(directory, program)
    plain = grafted_hf_trace(gguf, reference, directory / "hf-plain.bin", None)
    runs = [
        grafted_hf_trace(gguf, reference, directory / f"hf-all-but-{i:02d}-{stage}.bin", all_but(stage))
        for i, stage in enumerate(HF_STAGES)
    ]
    return graft_report(reference, runs, plain, CompareOptions(tolerances=str(TOLERANCES), windows=WINDOWS))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.hunt.graft_hf",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=Path, help="keep the model and traces in this directory")
    parser.add_argument("--format", choices=("text", "md"), default="text")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.out or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        report = hf_graft_report(directory)
        print(render_markdown(report) if args.format == "md" else report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
