"""Dumps made by the real tools of the tiny Qwen2, as made and with one planted weight change
(examples/tool_dumps/models.py: layer 1's mlp.down_proj scaled by 1.25): a run compared with the same
run again passes (exit 0), and against the planted run the first divergence is named at layer 1,
at the down projection. Slow: each tool runs the model, llama.cpp is built, the model is exported
to ONNX."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from examples.tool_dumps.models import PLANTED_MODULE, hf_model, prompt_ids, write_models
from tests.read.formats.tools.conftest import compare_exit

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    made = write_models(tmp_path_factory.mktemp("models"))
    return {"clean": made["clean"], "again": made["clean"], "planted": made["planted"]}


def _first(text: str) -> str:
    """The line that names the first divergence."""
    return text.split("FIRST DIVERGENCE")[1].splitlines()[1].strip()


def _check(runs: dict[str, Path], expect: str, *extra: str) -> None:
    code, text = compare_exit(runs["clean"], runs["again"], *extra)
    assert code == 0, text[-3000:]
    code, text = compare_exit(runs["clean"], runs["planted"], *extra)
    assert code == 1 and _first(text).startswith(expect), text[-3000:]


def _tool(tool: str, model: Path, out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "examples.tool_dumps.torch_tools", tool, str(model), str(out)],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    return out


def test_transformers_model_debugger(models, tmp_path):
    runs = {kind: _tool("hf", gguf, tmp_path / kind) for kind, gguf in models.items()}
    _check(runs, f"{PLANTED_MODULE}, layer 1, token 0")


@pytest.mark.parametrize("task", ["tensor", "statistics"])
def test_msprobe_at_level_l0_on_the_cpu(models, tmp_path, task):
    runs = {kind: _tool(f"msprobe-{task}", gguf, tmp_path / kind) for kind, gguf in models.items()}
    _check(runs, f"{PLANTED_MODULE}, layer 1")


def test_sglang_dumper_from_its_wheel_in_hook_mode(models, tmp_path):
    from examples.tool_dumps.sglang_dump import dump

    wheel = next((ROOT / ".cache" / "wheels").glob("sglang-*.whl"))
    runs = {kind: dump(wheel, hf_model(gguf), prompt_ids(), tmp_path / kind) for kind, gguf in models.items()}
    _check(runs, f"{PLANTED_MODULE}, layer 1")


def test_polygraphy_with_onnxruntime_on_the_exported_model(models, tmp_path):
    from examples.tool_dumps.polygraphy_run import dump

    runs = {kind: dump(hf_model(gguf), prompt_ids(), tmp_path / kind) for kind, gguf in models.items()}
    _check(runs, "/" + PLANTED_MODULE.replace(".", "/") + "/")


def test_llama_cpp_common_debug_callback_and_its_pytorch_twin(models, tmp_path):
    from examples.llama_cpp.debug_callback import build, run
    from examples.tool_dumps.pytorch_twin import dump

    program = build()
    runs = {kind: run(gguf, tmp_path / "llama" / kind, program=program) for kind, gguf in models.items()}
    _check(runs, "ffn_out, layer 1")  # llama.cpp's name for the down projection's output
    twins = {kind: dump(hf_model(gguf), prompt_ids(), tmp_path / "twin" / kind) for kind, gguf in models.items()}
    _check(twins, f"{PLANTED_MODULE}, layer 1")
    logits = {kind: path.parent / "llamacpp-model.bin" for kind, path in runs.items()}
    assert compare_exit(logits["clean"], logits["again"], "--quiet")[0] == 0
    # The two engines' logits of one model, each as its own tool saved them, agree.
    assert compare_exit(logits["clean"], twins["clean"].parent / "data" / "pytorch-model.bin", "--quiet")[0] == 0


def test_a_debugger_dump_compares_with_an_orchlog_trace_through_a_shipped_map(models, tmp_path):
    import torch

    import orchlog
    import orchlog.torch
    from orchlog.emit import api

    trace = tmp_path / "orchlog.bin"
    model = hf_model(models["clean"])
    orchlog.configure(path=str(trace), mode="full", team="hf")
    with orchlog.torch.attach(model), torch.no_grad():
        model(input_ids=prompt_ids())
    api.close()
    runs = {kind: _tool("hf", gguf, tmp_path / kind) for kind, gguf in models.items()}
    code, text = compare_exit(trace, runs["clean"], "--map", "hf_qwen2")
    assert code == 0 and "RESULT: ok" in text, text[-3000:]
    code, text = compare_exit(trace, runs["planted"], "--map", "hf_qwen2")
    assert code == 1 and _first(text).startswith(f"{PLANTED_MODULE}, layer 1, token 0"), text[-3000:]
