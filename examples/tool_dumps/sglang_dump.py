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

import importlib.util
import sys
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any

from examples import cli
from examples.tool_dumps.models import OUT_DIR, hf_model, prompt_ids

DUMPER_IN_WHEEL = "sglang/srt/debug_utils/dumper.py"
TENSOR_DUMPER_IN_WHEEL = "sglang/srt/debug_utils/tensor_dump_forward_hook.py"


def _stub(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def _unavailable(*_args: Any, **_kwargs: Any) -> Any:
    raise RuntimeError("SGLang's runtime is not here: the dumper runs standalone")


class _NeverPassed:
    """Stands for SGLang's runtime classes (ForwardBatch, LogitsProcessorOutput): no value here is one."""


def load_dumper(wheel: Path) -> Any:
    """SGLang's dumper module, loaded from the wheel with its control-path imports stubbed."""
    return _load_from_wheel(wheel, DUMPER_IN_WHEEL, "sglang_dumper_standalone")


def load_tensor_dumper(wheel: Path) -> Any:
    """SGLang's TensorDumper module (tensor_dump_forward_hook.py), loaded the same way."""
    return _load_from_wheel(wheel, TENSOR_DUMPER_IN_WHEEL, "sglang_tensor_dumper_standalone")


def _load_from_wheel(wheel: Path, member: str, name: str) -> Any:
    with zipfile.ZipFile(wheel) as zf:
        source = zf.read(member)
    work = Path(tempfile.mkdtemp(prefix="sglang-debug-utils-"))
    path = work / Path(member).name
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
        "sglang.srt.layers": _stub("sglang.srt.layers"),
        "sglang.srt.layers.logits_processor": _stub(
            "sglang.srt.layers.logits_processor", LogitsProcessorOutput=_NeverPassed
        ),
        "sglang.srt.model_executor": _stub("sglang.srt.model_executor"),
        "sglang.srt.model_executor.forward_batch_info": _stub(
            "sglang.srt.model_executor.forward_batch_info", ForwardBatch=_NeverPassed, PPProxyTensors=_NeverPassed
        ),
    }
    saved = {name: sys.modules.get(name) for name in stubs}
    sys.modules.update(stubs)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
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


def dump(wheel: Path, model: Any, input_ids: Any, out_dir: Path, exp_name: str = "run") -> Path:
    """One forward pass of `model` (a torch module taking input_ids) through SGLang's hook-mode dumper; the
    dump's directory."""
    import torch

    module = load_dumper(wheel)
    config = module.DumperConfig(
        enable=True,
        dir=str(out_dir),
        exp_name=exp_name,
        non_intrusive_mode="all",
        enable_output_console=False,
    )
    dumper = module._Dumper(config=config)
    dumper.register_non_intrusive_dumper(model)
    with torch.no_grad():
        model(input_ids=input_ids)
    dumper.step()
    return out_dir / exp_name


def tensor_dumper(wheel: Path, model: Any, input_ids: Any, out_dir: Path) -> Path:
    """One forward pass through SGLang's TensorDumper hooks (`--debug-tensor-dump-output-folder`), as rank 0 of
    one; the directory it wrote (TP0_PP0_Rank0_pid{pid}, renamed pid0 so that two runs compare by name)."""
    import torch

    module = load_tensor_dumper(wheel)
    dumper = module.register_forward_hook_for_model(model, str(out_dir), None, 1, 0, 0)
    with torch.no_grad():
        model(input_ids=input_ids)
    made = Path(dumper.get_dump_dir())
    stable = made.with_name("TP0_PP0_Rank0_pid0")
    made.rename(stable)
    return stable


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("examples.tool_dumps.sglang_dump", __doc__)
    parser.add_argument("wheel", type=Path, help="SGLang's wheel (scripts/bootstrap.sh fetches it)")
    args = cli.model_and_out(parser, OUT_DIR).parse_args(argv)
    print(dump(args.wheel, hf_model(args.model), prompt_ids(), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
