"""Write the other tools' dumps that the readers' tests read, each made by the tool itself.

    .venv/bin/python -m tests.read.data.tools.make_fixtures [--sglang-wheel WHEEL]

Every dump is of the micro Qwen2 (examples/tool_dumps/models.micro_model), once as made (`clean`)
and once with layer 1's mlp.down_proj scaled (`planted`): HF's model debugger, msprobe's statistics
task, SGLang's TensorDumper (from its wheel), Polygraphy with onnxruntime; msprobe's tensor task and
SGLang's dumper (a file per tensor) as made only.
The llama.cpp printouts are of the tiny Qwen2 (examples/llama_cpp/debug_callback and
examples/tool_dumps/pytorch_twin). What the readers do not read (msprobe's stack.json, which
holds this machine's paths; the ONNX model) is left out. TorchTitan's and DebugMode's text dumps
are written by hand in their writers' layout (numerics/), as neither tool runs here.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]


def _run(*args: str) -> None:
    subprocess.run([sys.executable, *args], check=True, cwd=ROOT, capture_output=True)


def torch_tools(kind: str) -> None:
    # The tensor task's planted dump would add 300 KiB for what the statistics task's shows too.
    for tool in ("hf", "msprobe-tensor", "msprobe-statistics") if kind == "clean" else ("hf", "msprobe-statistics"):
        out = HERE / f"{tool}-{kind}"
        shutil.rmtree(out, ignore_errors=True)
        with tempfile.TemporaryDirectory() as tmp:
            _run("-m", "examples.tool_dumps.torch_tools", tool, f"micro-{kind}", f"{tmp}/dump")
            made = Path(tmp) / "dump"
            if tool.startswith("msprobe"):
                rank_dir = next(made.glob("step0/*"))
                for name in ("stack.json", "construct.json"):
                    (rank_dir / name).unlink(missing_ok=True)
                rank_dir.rename(rank_dir.parent / "rank0")  # proc{pid} would differ at every run
            shutil.copytree(made, out)


def sglang(kind: str, wheel: Path) -> None:
    from examples.tool_dumps.models import load
    from examples.tool_dumps.sglang_dump import dump, tensor_dumper

    if kind == "clean":  # a file per tensor: the planted run is left to the slow tier's real-tool tests
        out = HERE / "sglang-clean"
        shutil.rmtree(out, ignore_errors=True)
        model, ids = load("micro-clean")
        dump(wheel, model, ids, out, exp_name="dump_micro")
    out = HERE / f"tensor-dumper-{kind}"
    shutil.rmtree(out, ignore_errors=True)
    model, ids = load(f"micro-{kind}")
    tensor_dumper(wheel, model, ids, out)


def polygraphy(kind: str) -> None:
    from examples.tool_dumps.models import load
    from examples.tool_dumps.polygraphy_run import dump

    model, ids = load(f"micro-{kind}")
    with tempfile.TemporaryDirectory() as tmp:
        outputs = dump(model, ids, Path(tmp))
        shutil.copy(outputs, HERE / f"polygraphy-{kind}.json")
        if kind == "clean":
            shutil.copy(Path(tmp) / "inputs.json", HERE / "polygraphy-inputs.json")


def llama_cpp(kind: str) -> None:
    from examples.llama_cpp.debug_callback import run
    from examples.tool_dumps.models import hf_model, prompt_ids, write_models
    from examples.tool_dumps.pytorch_twin import dump

    with tempfile.TemporaryDirectory() as tmp:
        gguf = write_models(Path(tmp))[kind]
        text = run(gguf, Path(tmp) / "llama")
        shutil.copy(text, HERE / f"llama-eval-callback-{kind}.txt")
        twin = dump(hf_model(gguf), prompt_ids(), Path(tmp) / "twin")
        shutil.copy(twin, HERE / f"pytorch-twin-{kind}.txt")
        if kind == "clean":
            for name in ("llamacpp-model.bin", "llamacpp-model-tokens.bin"):
                shutil.copy(Path(tmp) / "llama" / name, HERE / name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.read.data.tools.make_fixtures", description=__doc__)
    p.add_argument("--sglang-wheel", type=Path, help="SGLang's wheel (scripts/bootstrap.sh keeps one in .cache/wheels)")
    args = p.parse_args(argv)
    wheel = args.sglang_wheel or next((ROOT / ".cache" / "wheels").glob("sglang-*.whl"))
    for kind in ("clean", "planted"):
        torch_tools(kind)
        sglang(kind, wheel)
        polygraphy(kind)
        llama_cpp(kind)
    return 0


if __name__ == "__main__":
    sys.exit(main())
