"""SGLang's own dumper (`sglang/srt/debug_utils/dumper.py` from its PyPI wheel) in its non-intrusive hook
mode, on a HF transformers model, on the CPU.

The wheel is not installed (SGLang's dependency tree is a GPU serving stack): `load_dumper` reads
dumper.py out of the wheel and runs it as the standalone module its docstring describes ("Import from
non-SGLang system"), with the few modules it imports for its HTTP/ZMQ control path and for SGLang's
runtime stubbed (they are reached only when a control port is configured, which it is not here).
Everything that writes the dump is SGLang's code as released.

    python -m examples.tool_dumps.sglang_dump WHEEL MODEL.gguf OUT_DIR
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any

DUMPER_IN_WHEEL = "sglang/srt/debug_utils/dumper.py"


def _stub(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def _unavailable(*_args: Any, **_kwargs: Any) -> Any:
    raise RuntimeError("SGLang's runtime is not here: the dumper runs standalone")


def load_dumper(wheel: Path) -> Any:
    """SGLang's dumper module, loaded from the wheel with its control-path imports stubbed."""
    with zipfile.ZipFile(wheel) as zf:
        source = zf.read(DUMPER_IN_WHEEL)
    work = Path(tempfile.mkdtemp(prefix="sglang-dumper-"))
    path = work / "dumper.py"
    path.write_bytes(source)
    stubs = {
        "zmq": _stub("zmq", Context=_unavailable, REQ=3, REP=4, PUSH=8, PULL=7),
        "sglang": _stub("sglang"),
        "sglang.srt": _stub("sglang.srt"),
        "sglang.srt.managers": _stub("sglang.srt.managers"),
        "sglang.srt.managers.io_struct": _stub(
            "sglang.srt.managers.io_struct", sock_recv=_unavailable, sock_send=_unavailable, wrap_as_pickle=_unavailable
        ),
        "sglang.srt.runtime_context": _stub(
            "sglang.srt.runtime_context",
            get_parallel=_unavailable,
            get_server_args=lambda: None,
            get_serving=_unavailable,
        ),
        "sglang.srt.utils": _stub("sglang.srt.utils", get_device=lambda *a, **k: "cpu"),
    }
    saved = {name: sys.modules.get(name) for name in stubs}
    sys.modules.update(stubs)
    try:
        spec = importlib.util.spec_from_file_location("sglang_dumper_standalone", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return module


def dump(wheel: Path, gguf: Path, out_dir: Path, exp_name: str = "run") -> Path:
    """One forward pass of the model of `gguf` through SGLang's hook-mode dumper; the dump's directory."""
    import torch

    from examples.tool_dumps.models import hf_model, prompt_ids

    module = load_dumper(wheel)
    config = module.DumperConfig(
        enable=True,
        dir=str(out_dir),
        exp_name=exp_name,
        non_intrusive_mode="all",
        enable_output_console=False,
    )
    dumper = module._Dumper(config=config)
    model = hf_model(gguf)
    dumper.register_non_intrusive_dumper(model)
    with torch.no_grad():
        model(input_ids=prompt_ids())
    dumper.step()
    return out_dir / exp_name


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m examples.tool_dumps.sglang_dump", description=__doc__)
    p.add_argument("wheel", type=Path)
    p.add_argument("gguf", type=Path)
    p.add_argument("out", type=Path)
    args = p.parse_args(argv)
    print(dump(args.wheel, args.gguf, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
