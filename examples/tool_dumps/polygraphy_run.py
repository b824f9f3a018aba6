"""Polygraphy with onnxruntime on the tiny Qwen2 exported to ONNX, every intermediate tensor marked as an
output: `polygraphy run MODEL.onnx --onnxrt --onnx-outputs mark all --save-outputs OUT.json`.

torch's ONNX exporter (the dynamo one: the TorchScript one no longer exports this model) names
intermediate values after the aten op (`linear_13`) and keeps the module in each node's metadata;
`export` renames each value into its module's scope, `/model/layers/1/mlp/down_proj/linear_13`, as the
TorchScript exporter named them, so that the dump says which module computed what.

    python -m examples.tool_dumps.polygraphy_run MODEL.gguf OUT_DIR
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only: onnx and torch are imported by the functions that use them
    import onnx

from examples.tool_dumps.models import dump_main

NAMESPACE = "namespace"


def export(model: Any, input_ids: Any, onnx_path: Path) -> Path:
    import onnx
    import torch

    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            logits: torch.Tensor = self.m(input_ids=input_ids, use_cache=False).logits
            return logits

    torch.onnx.export(
        Logits().eval(), (input_ids,), str(onnx_path), input_names=["input_ids"], output_names=["logits"], dynamo=True
    )
    graph = onnx.load(str(onnx_path))
    _scope_names(graph)
    onnx.save(graph, str(onnx_path))
    return onnx_path


def _module_of(namespace: str) -> str | None:
    """`... /m.model.layers.1.mlp.down_proj: torch.nn...Linear/linear_13: aten...` -> model.layers.1.mlp.down_proj."""
    modules = [part.split(":", 1)[0] for part in namespace.split("/") if part.startswith("m.")]
    return modules[-1][2:] if modules else None


def _scope_names(graph: onnx.ModelProto) -> None:
    keep = {v.name for v in graph.graph.input} | {v.name for v in graph.graph.output}
    renamed: dict[str, str] = {}
    for node in graph.graph.node:
        namespace = next((p.value for p in node.metadata_props if p.key == NAMESPACE), "")
        module = _module_of(namespace)
        for k, out in enumerate(node.output):
            if out and out not in keep and module:
                renamed[out] = "/" + module.replace(".", "/") + "/" + out
            if out in renamed:
                node.output[k] = renamed[out]
    for node in graph.graph.node:
        for k, name in enumerate(node.input):
            if name in renamed:
                node.input[k] = renamed[name]
    for info in graph.graph.value_info:
        if info.name in renamed:
            info.name = renamed[info.name]


def write_inputs(input_ids: Any, path: Path) -> Path:
    """The prompt as Polygraphy's inputs JSON (a list of {name: array}, one per iteration)."""
    from polygraphy.json import save_json

    save_json([{"input_ids": input_ids.numpy()}], str(path))
    return path


def run(onnx_path: Path, inputs: Path, outputs: Path) -> Path:
    """Polygraphy's own command line, from the environment this Python runs in."""
    polygraphy = Path(sys.executable).parent / "polygraphy"
    cmd = [str(polygraphy), "run", str(onnx_path), "--onnxrt", "--onnx-outputs", "mark", "all"]
    subprocess.run(
        [*cmd, "--load-inputs", str(inputs), "--save-outputs", str(outputs)], check=True, capture_output=True
    )
    return outputs


def dump(model: Any, input_ids: Any, out_dir: Path) -> Path:
    """Polygraphy's outputs JSON of `model` on input_ids (out_dir also gets the model and the inputs)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx_path = export(model, input_ids, out_dir / "model.onnx")
    inputs = write_inputs(input_ids, out_dir / "inputs.json")
    return run(onnx_path, inputs, out_dir / "outputs.json")


def main(argv: list[str] | None = None) -> int:
    return dump_main("examples.tool_dumps.polygraphy_run", __doc__, dump, argv)


if __name__ == "__main__":
    sys.exit(main())
