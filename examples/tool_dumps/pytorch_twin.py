"""The PyTorch side of llama.cpp's model-conversion scripts, run on the tiny Qwen2: `scripts/utils/common.py`
from the pinned llama.cpp tree, whose `debug_hook` prints every leaf module's input and output in
llama.cpp's debug style (`ggml_debug: NAME_out = (f32) ... = {torch.Size([...])}`) and whose
`save_output_data` writes `data/pytorch-{model}.bin` (the last token's logits, raw f32) and
`-tokens.bin`, as `causal/run-org-model.py` calls them.

    python -m examples.tool_dumps.pytorch_twin MODEL.gguf OUT_DIR
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
from pathlib import Path
from typing import Any

COMMON = "examples/model-conversion/scripts/utils/common.py"


def load_common() -> Any:
    from orchlog.llama.build import vendored_source

    spec = importlib.util.spec_from_file_location("llama_cpp_conversion_common", vendored_source() / COMMON)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dump(model: Any, ids: Any, out_dir: Path, name: str = "model") -> Path:
    """out_dir/pytorch-debug.txt (what the hooks print) and out_dir/data/pytorch-NAME.bin; the text file."""
    import torch

    common = load_common()
    for module_name, module in model.named_modules():  # run-org-model.py's enable_torch_debugging
        if len(list(module.children())) == 0:
            module.register_forward_hook(common.debug_hook(module_name))
    out_dir.mkdir(parents=True, exist_ok=True)
    printed = io.StringIO()
    with torch.no_grad(), contextlib.redirect_stdout(printed):
        logits = model(input_ids=ids).logits
        common.save_output_data(
            logits[0, -1, :].float().cpu().numpy(), ids[0], "", name, output_dir=str(out_dir / "data")
        )
    text = out_dir / "pytorch-debug.txt"
    text.write_text(printed.getvalue())
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m examples.tool_dumps.pytorch_twin", description=__doc__)
    p.add_argument("gguf", type=Path)
    p.add_argument("out", type=Path)
    args = p.parse_args(argv)
    from examples.tool_dumps.models import hf_model, prompt_ids

    print(dump(hf_model(args.gguf), prompt_ids(), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
