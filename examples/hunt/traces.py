"""Each engine's orchlog trace of the default scenario: full tensors (binary
stream), one record per token row, llama.cpp's graph names as checkpoints
(HF's module paths are mapped onto them by orchlog/maps/hf_qwen2.toml)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import orchlog
from examples.llama_cpp.run import TraceSettings, run_llama_cpp
from examples.numpy_engine.bugs import Bug
from examples.numpy_engine.run import run_numpy_engine
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario

# The HF modules whose outputs, and those whose inputs, hf_qwen2.toml maps.
HF_OUTPUTS = (
    "model.embed_tokens",
    "model.norm",
    "lm_head",
    "model.layers.*",
    "model.layers.*.input_layernorm",
    "model.layers.*.post_attention_layernorm",
    "model.layers.*.self_attn.?_proj",
    "model.layers.*.mlp",
    "model.layers.*.mlp.gate_proj",
    "model.layers.*.mlp.up_proj",
)
HF_INPUTS = ("**.self_attn.o_proj", "**.post_attention_layernorm", "**.mlp.down_proj")


class _Run:
    """An orchlog run of this process, closed on exit (the emitter is process-wide)."""

    def __init__(self, path: Path, team: str, mode: str = "full", select: str = "") -> None:
        orchlog.configure(path=str(path), mode=mode, team=team, select=select)

    def __enter__(self) -> _Run:
        return self

    def __exit__(self, *exc: object) -> None:
        orchlog.close()


def llama_trace(gguf: Path, out: Path, program: Path | None = None, scenario: Scenario = DEFAULT_SCENARIO) -> Path:
    run_llama_cpp(gguf, scenario, program=program, trace=TraceSettings(out))
    return out


def numpy_trace(
    gguf: Path,
    out: Path,
    bugs: Bug = Bug.NONE,
    scenario: Scenario = DEFAULT_SCENARIO,
    mode: str = "full",
    select: str = "",
) -> Path:
    """Every stage of the NumPy engine, each record with the token id of its position (whole tensors, or
    summaries with `mode="summary"`; only the records `select` names, an ORCH_LOG_SELECT text, when given)."""
    token_ids = scenario.prompt + scenario.decode

    def observe(
        checkpoint: str, layer: int | None, token_idx: int, step: int, array: np.ndarray, stage: str | None = None
    ) -> None:
        orchlog.log(
            checkpoint,
            np.ascontiguousarray(array),
            token_idx=token_idx,
            layer=layer,
            stage=stage,
            step=step,
            token_id=token_ids[token_idx],
        )

    with _Run(out, f"numpy{'+' + bugs.label if bugs else ''}", mode, select):
        run_numpy_engine(gguf, scenario, bugs=bugs, observe=observe)
    return out


def hf_trace(gguf: Path, out: Path, scenario: Scenario = DEFAULT_SCENARIO, cache: bool = False) -> Path:
    """HF's modules as hf_qwen2.toml maps them, with the attention probabilities (and, asked, the KV cache)."""
    import orchlog.torch
    from examples.qwen2_tiny.hf_model import load_hf_model
    from examples.qwen2_tiny.run_hf import run_hf

    model = load_hf_model(gguf)
    with _Run(out, "hf"), orchlog.torch.attach(model, HF_OUTPUTS, inputs=HF_INPUTS, attention=True, cache=cache):
        run_hf(gguf, scenario, model=model)
    return out


def vllm_style_trace(gguf: Path, out: Path, bugs: Bug = Bug.NONE, scenario: Scenario = DEFAULT_SCENARIO) -> Path:
    """The NumPy engine logging what a vLLM-style engine does (examples/numpy_engine/vllm_style.py)."""
    from examples.numpy_engine.vllm_style import observer

    def log(
        checkpoint: str, layer: int | None, token_idx: int, step: int, array: np.ndarray, stage: str | None = None
    ) -> None:
        orchlog.log(checkpoint, np.ascontiguousarray(array), token_idx=token_idx, layer=layer, stage=stage, step=step)

    with _Run(out, f"vllm-style{'+' + bugs.label if bugs else ''}"):
        run_numpy_engine(gguf, scenario, bugs=bugs, observe=observer(log))
    return out
