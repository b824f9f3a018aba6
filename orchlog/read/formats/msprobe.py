"""msprobe (`mindstudio-probe`) dumps: `{dump_path}/step{N}/rank{R}/dump.json` (or `proc{PID}/` when
no rank was set), with the tensors of `task: tensor` under `dump_tensor_data/` beside it.

    {"task": "tensor", "level": "L0", "framework": "pytorch", "dump_data_dir": "/abs/path/on/producer",
     "data": {"Module.model.layers.0.mlp.down_proj.Linear.forward.0": {
                 "input_args": [T], "input_kwargs": {...}, "output": [T], "parameters": {"weight": T}}}}
    T = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1, 8, 64], "Max", "Min", "Mean",
         "Norm", "requires_grad", "md5"?, "data_name"?}

Every tensor is a record with its statistics (min, max, mean; rms = Norm / sqrt(numel)); with
`data_name` the whole tensor is read lazily from `dump_tensor_data/` beside dump.json (the
recorded `dump_data_dir` is a path on the machine that made the dump, and is not used).
`md5` is msprobe's CRC-32 of the tensor's bytes (summary_mode md5, beside the statistics): meta
`crc32`, which compare takes as equality when both sides carry the same one and no blake3 (a chance
of 2**-32 that two different tensors share it); under summary_mode xor the same key holds an XOR of
the bytes, which any reordering keeps: meta `xor_checksum`, never taken as equality.
Module entries (`Module.{path}.{Class}.{forward|backward}.{call}`) become checkpoint = the module
path; API entries (`{Torch|Functional|Tensor|...}.{api}.{call}.{direction}`) checkpoint =
`{Type}.{api}.{call}`. Stage: None for the first output, `output.{i}` for others, `input` for the
first positional input, `input.{i}` / `input.{name}` for others, `param.{name}` for a module's
parameters; a backward entry's stage starts `backward/`. Step is N of `step{N}`, rank R of
`rank{R}`, and the module's call index goes to meta `call`. The dump.json is written when the
debugger stops: a run that crashed has tensors and no dump.json, and nothing is read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.read.formats import first_object, register_records
from orchlog.read.formats.tool_common import ArrayLoader, layer_of, read_document, tool_header
from orchlog.read.torch_file import TensorRef, UnsafePickle, read_torch_file
from orchlog.read.trace import Location, Trace, TraceRecord
from orchlog.schema_gen import DTYPE_ALIASES, DTYPE_NUMPY, DTYPE_SIZES, Stats

DATA_DIR = "dump_tensor_data"
_STEP = re.compile(r"^step(\d{1,9})$")
_RANK = re.compile(r"^rank(\d{1,9})$")
_CRC32 = re.compile(r"^[0-9a-fA-F]{8}$")
_SAFE_NAME = re.compile(r"^[^/\\\x00]{1,1024}$")


def _sniff(path: Path, head: bytes) -> bool:
    _, keys = first_object(head)
    return {"task", "level", "data"} <= keys or {"task", "level", "dump_data_dir"} <= keys


def _entry_keys(name: str) -> tuple[str, int | None, bool]:
    """(checkpoint, call index, backward) of a dump.json entry name."""
    parts = name.split(".")
    if parts[0] == "Module" and len(parts) >= 5 and parts[-1].isdigit() and parts[-2] in ("forward", "backward"):
        return ".".join(parts[1:-3]), int(parts[-1][:9]), parts[-2] == "backward"
    if len(parts) >= 4 and parts[-1] in ("forward", "backward") and parts[-2].isdigit():
        return ".".join(parts[:-1]), int(parts[-2][:9]), parts[-1] == "backward"
    return name, None, False


def _tensors(entry: dict[str, Any]) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """(stage, tensor dict) of one entry's inputs, outputs and parameters."""
    args = entry.get("input_args")
    if isinstance(args, list):
        for i, t in enumerate(args):
            yield ("input" if i == 0 else f"input.{i}"), t
    kwargs = entry.get("input_kwargs")
    if isinstance(kwargs, dict):
        for k, t in kwargs.items():
            yield f"input.{k}", t
    for key in ("output", "outputs"):
        out = entry.get(key)
        if isinstance(out, list):
            for i, t in enumerate(out):
                yield (None if i == 0 else f"output.{i}"), t
        elif isinstance(out, dict):
            yield None, out
    params = entry.get("parameters")
    if isinstance(params, dict):
        for k, t in params.items():
            yield f"param.{k}", t


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _load(path: Path, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    try:
        value = read_torch_file(path)
    except UnsafePickle as exc:
        raise OSError(f"{path.name}: {exc}") from None
    if not isinstance(value, TensorRef) or value.dtype != dtype or value.shape != shape:
        raise OSError(f"{path.name} does not hold the {dtype} tensor of shape {list(shape)} that dump.json describes")
    return np.frombuffer(value.load(), dtype=DTYPE_NUMPY[dtype])


class _Reader:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.dir = Path(trace.path).parent
        step = _STEP.match(self.dir.parent.name)
        rank = _RANK.match(self.dir.name)
        self.step = int(step[1]) if step else None
        self.rank = int(rank[1]) if rank else 0

    def record(self, name: str, stage: str | None, t: Any, where: Location, call: int | None) -> TraceRecord | None:
        if not isinstance(t, dict) or t.get("type") not in ("torch.Tensor", "mindspore.Tensor", "numpy.ndarray"):
            return None
        dtype_text = t.get("dtype")
        dtype = DTYPE_ALIASES.get(dtype_text) if isinstance(dtype_text, str) else None
        shape_v = t.get("shape")
        if (
            not isinstance(shape_v, list)
            or len(shape_v) > 64
            or not all(isinstance(d, int) and 0 <= d < 2**40 for d in shape_v)
        ):
            self.trace.report(where, f"{name}: a tensor without a valid shape; skipped")
            return None
        shape = tuple(shape_v)
        numel = math.prod(shape)
        lo, hi, mean, norm = (_number(t.get(k)) for k in ("Min", "Max", "Mean", "Norm"))
        rms = norm / math.sqrt(numel) if norm is not None and numel else None
        finite = [abs(x) for x in (lo, hi) if x is not None and math.isfinite(x)]
        meta: dict[str, Any] = {} if call is None else {"call": call}
        checksum = t.get("md5")
        if isinstance(checksum, str) and _CRC32.match(checksum) and "Max" in t:
            meta["crc32"] = checksum.lower()  # summary_mode md5: a CRC-32 of the bytes, beside the statistics
        elif checksum is not None:
            meta["xor_checksum"] = str(checksum)[:64]  # summary_mode xor: reordered bytes share it; never equality
        loader = None
        data_name = t.get("data_name")
        if isinstance(data_name, str) and dtype is not None and _SAFE_NAME.match(data_name):
            file = self.dir / DATA_DIR / data_name  # beside dump.json, whatever dump_data_dir says
            if data_name.endswith(".pt") and file.is_file():
                loader = ArrayLoader(lambda: _load(file, dtype, shape), numel * DTYPE_SIZES[dtype])
            elif not file.is_file():
                self.trace.report(where, f"{name}: {DATA_DIR}/{data_name[:120]} is missing; its statistics kept")
        return TraceRecord(
            checkpoint=name,
            layer=layer_of(name),
            stage=stage,
            step=self.step,
            rank=self.rank,
            dtype=dtype,
            shape=shape,
            numel=numel,
            # msprobe's statistics for a summary; a tensor at hand gives its own, by orchlog's rules.
            stats=Stats(lo, hi, mean, rms, max(finite) if finite else None, 0, 0) if loader is None else None,
            meta=meta,
            location=where,
            loader=loader,
        )


def _records(trace: Trace) -> Iterator[TraceRecord]:
    where = Location(trace.path)
    doc = read_document(trace, "a dump.json")
    if doc is None:
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict):
        trace.report(where, "a dump.json without its data; not read", fatal=True)
        return
    task, level = doc.get("task"), doc.get("level")
    trace.headers.append(
        tool_header(
            "msprobe",
            f"{'full tensors and ' if task == 'tensor' else ''}statistics (max, min, mean, norm) per module call",
            task=task if isinstance(task, str) else None,
            level=level if isinstance(level, str) else None,
            framework=doc.get("framework") if isinstance(doc.get("framework"), str) else None,
        )
    )
    reader = _Reader(trace)
    for entry_name, entry in doc["data"].items():
        if not isinstance(entry, dict):
            continue
        checkpoint, call, backward = _entry_keys(str(entry_name)[:1024])
        for stage, t in _tensors(entry):
            if backward:
                stage = f"backward/{stage or 'output'}"
            try:
                rec = reader.record(checkpoint, stage, t, where, call)
            except (ValueError, TypeError, OverflowError) as exc:
                trace.report(where, f"{checkpoint}: invalid tensor entry ({exc}); skipped")
                continue
            if rec is not None:
                yield rec


register_records(
    "msprobe",
    _sniff,
    _records,
    priority=26,
    companions=(f"{DATA_DIR}/*", "stack.json", "construct.json", "dump_error_info.log", "debug.json"),
)
