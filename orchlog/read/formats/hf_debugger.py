"""HF transformers' `model_addition_debugger_context` call tree: `{Model}_debug_tree_FULL_TENSORS.json`
(or `..._SUMMARY.json`, the same tree without values).

A node is `{"module_path": "Qwen2ForCausalLM.model.layers.0.mlp.down_proj", "inputs": {"args": [...],
"kwargs": {...}}, "outputs": ..., "children": [...]}`; a tensor is `{"shape": "torch.Size([1, 5, 64])",
"dtype": "torch.float32", "value": ..., "mean": "tensor(1.2e-01)", "std", "min", "max"}` (the
statistics are reprs, for floating dtypes only). With `use_repr=False` the value is the relative path
of a safetensors file holding one tensor named `data`; otherwise it is repr lines (or absent in the
SUMMARY), and the record is a summary: min, max, mean and the rms from mean and std.

What the debugger writes, and so what is here: outputs of leaf modules only (a module with children
has none); inputs of every module; one forward call (each call rewrites the files: step 0); rank 0 only;
with `do_prune_layers=True` (its default) only the first and last decoder layers. Module paths lose
the model class in front, so that they read as orchlog.torch logs them (`model.layers.0.mlp.down_proj`,
layer 0). Tensors [1, n, ...] whose n is the prompt's length (the root's input_ids) become one record
per token, positions 0..n-1, as orchlog.torch writes them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.read import fields
from orchlog.read.formats import first_object, register_records
from orchlog.read.formats.legacy_checkpoint import parse_shape
from orchlog.read.formats.tool_common import layer_of, read_document, token_records, tool_header
from orchlog.read.safetensors_file import SafeTensor, read_header
from orchlog.read.trace import Location, Trace, TraceRecord
from orchlog.schema_gen import DTYPE_ALIASES, DTYPE_NUMPY, Stats

_STAT = re.compile(r"tensor\(\s*([-+]?(?:[0-9][0-9.]*(?:e[-+]?[0-9]+)?|nan|inf))", re.IGNORECASE)
_SIZE = re.compile(r"torch\.Size\(\[([0-9, ]*)\]\)")


def _sniff(path: Path, head: bytes) -> bool:
    _, keys = first_object(head)
    return "module_path" in keys and bool(keys & {"children", "inputs", "outputs"})


def _number(v: Any) -> float | None:
    m = _STAT.match(v) if isinstance(v, str) else None
    return float(m[1]) if m else None


def _stats(t: dict[str, Any], numel: int | None) -> Stats | None:
    lo, hi, mean, std = (_number(t.get(k)) for k in ("min", "max", "mean", "std"))
    if lo is None and hi is None and mean is None:
        return None
    rms = None
    if mean is not None and std is not None and numel:
        # torch's std is the unbiased one: the mean square is mean^2 + std^2 (n-1)/n
        rms = math.sqrt(mean * mean + std * std * (numel - 1) / numel) if math.isfinite(mean + std) else None
    finite = [abs(x) for x in (lo, hi) if x is not None and math.isfinite(x)]
    return Stats(lo, hi, mean, rms, max(finite) if finite else None, 0, 0)


def _tensors(value: Any, stage: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(stage, tensor dict) of an inputs/outputs value: a tensor, or lists and dicts of them."""
    stack = [(value, stage)]
    while stack:
        item, name = stack.pop(0)
        if isinstance(item, dict) and "dtype" in item and "shape" in item:
            yield name, item
        elif isinstance(item, dict):
            stack[:0] = [(v, f"{name}.{k}") for k, v in item.items()]
        elif isinstance(item, list):
            stack[:0] = [(v, f"{name}.{k}") for k, v in enumerate(item)]


def _input_stage(stage: str) -> str:
    """`input.args.0` -> `input` (what orchlog.torch calls a module's first input), `input.kwargs.x` -> `input.x`."""
    if stage == "input.args.0":
        return "input"
    return stage.replace("input.args.", "input.").replace("input.kwargs.", "input.")


def _output_stage(stage: str) -> str | None:
    return None if stage in ("output", "output.0") else stage


class _Tree:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.root_dir = Path(trace.path).parent
        self.positions: list[int] | None = None
        self.token_ids: list[int] | None = None
        self.files_seen: dict[str, str] = {}

    def record(self, path: str, stage: str | None, t: dict[str, Any], where: Location) -> Iterator[TraceRecord]:
        dtype_text = t.get("dtype")
        dtype = DTYPE_ALIASES.get(dtype_text) if isinstance(dtype_text, str) else None
        shape = self.shape(t.get("shape"))
        value = t.get("value")
        tensor = self.safetensor(value, path, where) if isinstance(value, str) else None
        if tensor is not None:
            dtype, shape = tensor.dtype, tensor.shape
        numel = math.prod(shape) if shape is not None else None
        rec = TraceRecord(
            checkpoint=path,
            layer=layer_of(path),
            stage=stage,
            step=0,
            dtype=dtype,
            shape=shape,
            numel=numel,
            # With the tensor at hand its own statistics are computed when needed; the debugger's reprs
            # (mean of an attention mask: -inf) are kept only for a summary.
            stats=_stats(t, numel) if tensor is None else None,
            location=where,
            loader=tensor,
        )
        if tensor is None:
            if rec.stats is not None or rec.shape is not None:
                yield rec
            return
        yield from token_records(rec, tensor, self.positions or [], 1, self.token_ids)

    @staticmethod
    def shape(text: Any) -> tuple[int, ...] | None:
        if isinstance(text, str):
            m = _SIZE.search(text[:4096])
            if m:
                return parse_shape(f"[{m[1]}]")
        return None

    def safetensor(self, value: str, path: str, where: Location) -> SafeTensor | None:
        if not value.endswith(".safetensors"):
            return None
        name = Path(value).name  # the debugger writes "./{file}" beside the tree; nothing leaves that directory
        file = self.root_dir / name
        if name in self.files_seen:
            self.trace.report(
                where,
                f"{path} and {self.files_seen[name]} name the same file {name} (a module called twice: the debugger "
                "kept the last call's tensor)",
            )
        self.files_seen[name] = path
        try:
            tensors = read_header(file)
        except (OSError, ValueError) as exc:
            self.trace.report(where, f"{path}: {name} not read ({exc}); its summary kept")
            return None
        if "data" not in tensors:
            self.trace.report(where, f"{path}: {name} holds no tensor named data; its summary kept")
            return None
        return tensors["data"]

    def prompt(self, root: dict[str, Any]) -> None:
        """The prompt's positions (and token ids) from the root's input_ids, when the debugger kept them."""
        inputs = root.get("inputs")
        ids = None
        for stage, t in _tensors(inputs, "input"):
            if stage.endswith("input_ids") or stage == "input.args.0":
                ids = t
                break
        if ids is None:
            return
        shape = self.shape(ids.get("shape"))
        if shape is None or len(shape) != 2 or shape[0] != 1:
            return
        self.positions = list(range(shape[1]))
        value = ids.get("value")
        tensor = self.safetensor(value, "input_ids", Location(self.trace.path)) if isinstance(value, str) else None
        self.files_seen.clear()
        if tensor is not None and tensor.dtype in ("i64", "i32") and tensor.numel == shape[1]:
            try:
                self.token_ids = [int(x) for x in np.frombuffer(tensor(), dtype=DTYPE_NUMPY[tensor.dtype])]
            except OSError:
                pass


def _module_path(text: Any, root_name: str) -> str:
    path = fields.text(text, "module_path")
    if path.startswith(root_name + "."):
        return path[len(root_name) + 1 :]
    return path


def _records(trace: Trace) -> Iterator[TraceRecord]:
    where = Location(trace.path)
    root = read_document(trace, "a debugger tree")
    if root is None:
        return
    if not isinstance(root, dict) or not isinstance(root.get("module_path"), str):
        trace.report(where, "not a debugger call tree (no module_path at its root)", fatal=True)
        return
    root_name = root["module_path"].split(" ", 1)[0]
    summary = not _has_files(root)
    trace.headers.append(
        tool_header(
            "hf-model-debugger",
            "statistics of each module's inputs and leaf outputs"
            if summary
            else "full tensors (safetensors) of each module's inputs and leaf outputs",
            model=root_name,
        )
    )
    tree = _Tree(trace)
    tree.prompt(root)
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        try:
            path = _module_path(node.get("module_path"), root_name)
        except ValueError as exc:
            trace.report(where, f"a node's {exc}; skipped")
            continue
        for stage, t in _tensors(node.get("inputs"), "input"):
            yield from _guarded(trace, tree.record(path, _input_stage(stage), t, where), path)
        for stage, t in _tensors(node.get("outputs"), "output"):
            yield from _guarded(trace, tree.record(path, _output_stage(stage), t, where), path)
        children = node.get("children")
        if isinstance(children, list):
            stack.extend(reversed(children))


def _guarded(trace: Trace, records: Iterator[TraceRecord], path: str) -> Iterator[TraceRecord]:
    try:
        yield from records
    except (ValueError, TypeError, OverflowError) as exc:
        trace.report(Location(trace.path), f"{path}: invalid tensor ({exc}); skipped")


def _has_files(root: dict[str, Any]) -> bool:
    """Whether the tree's tensors are in safetensors files (use_repr=False) rather than summarised."""
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("value"), str) and item["value"].endswith(".safetensors"):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


register_records(
    "hf-debugger", _sniff, _records, priority=25, companions=("*.safetensors", "*_debug_tree_SUMMARY.json")
)
