"""Block-text statistics of PyTorch-side tools: TorchTitan's numerics log (`dump_captures_to_file`) and
PyTorch DebugMode's `dump_tensor_hashes()`.

    Total captured activations: 2                 Total captured tensor hash ops: 2
    ========...                                   ========...

    [layers.0.attention/op_0_mm]                  [layers.0.attention/op_0_aten.mm.default]
      Shape: torch.Size([8, 64]), Dtype: ...        Call type: torch op
      L1 norm:  1.234e+02                           Call index: 5
      L2 norm:  ...   Min: ...  Max: ...  Mean:     Call depth: 3
      Output hash: ...                              Input hashes: [0][0]=12.5, [0][1]=3.25
      Location: model.py:42                         Output hashes: <root>=7.125
      Phase: backward      (absent: forward)

Each block is a summary record: checkpoint = the module path before `/`, stage = `op_{k}_{op}`
after it (k counts the module's ops, the same in two runs of one program; a backward op's
stage starts `backward/`), layer from the path. TorchTitan's statistics become min, max, mean and
the rms (L2 norm / sqrt(numel)); the L1 norm and the hash go to meta. A DebugMode hash is a
float computed from the tensor (by default a sum-like norm), not a cryptographic digest, so it
is read as a statistic: one record per hashed tensor with the hash as its only value (stage
`op_{k}_{op}/output` or `/input` and the pytree path), compared within tolerance, never as
equality.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.read.formats import register_records
from orchlog.read.formats.lines import read_line_chunks
from orchlog.read.formats.tool_common import layer_of, tool_header
from orchlog.read.trace import Location, Trace, TraceRecord
from orchlog.schema_gen import DTYPE_ALIASES, Stats

_FIRST = re.compile(rb"^\s*Total captured (activations|tensor hash ops): [0-9]+")
_BLOCK = re.compile(r"^\[(?P<key>.+)\]\s*$")
_FIELD = re.compile(r"^\s+(?P<name>[A-Za-z][A-Za-z0-9 ]*?):\s*(?P<value>.*?)\s*$")
_SIZE = re.compile(r"(?:torch\.Size\()?\[([0-9, ]*)\]")
_LEAF = re.compile(r"\s*(?P<path>[^=,]+?)=(?P<value>\"[^\"]*\"|\{[^{}]*\}|\[[^\[\]]*\]|[^,]+)")
MAX_LEAVES = 4096


def _sniff(path: Path, head: bytes) -> bool:
    return _FIRST.match(head) is not None


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        v = float(text.split(",")[0].strip().strip('"'))
    except ValueError:
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(text.strip().strip('"'))
    return v


def _keys(key: str) -> tuple[str, str | None]:
    module, sep, op = key.rpartition("/")
    return (module, op) if sep else (key, None)


def _titan(trace: Trace, key: str, fields: dict[str, str], where: Location) -> Iterator[TraceRecord]:
    module, op = _keys(key)
    shape_text = fields.get("Shape", "")
    m = _SIZE.search(shape_text)
    shape = tuple(int(d) for d in m[1].replace(" ", "").split(",") if d) if m else None
    if shape is not None and (len(shape) > 64 or any(d >= 2**40 for d in shape)):
        shape = None
    dtype_m = re.search(r"Dtype: (torch\.\w+)", shape_text)
    numel = math.prod(shape) if shape is not None else None
    l2 = _number(fields.get("L2 norm"))
    lo, hi, mean = (_number(fields.get(k)) for k in ("Min", "Max", "Mean"))
    rms = l2 / math.sqrt(numel) if l2 is not None and numel else None
    finite = [abs(x) for x in (lo, hi) if x is not None and math.isfinite(x)]
    meta: dict[str, Any] = {}
    for name, meta_key in (("L1 norm", "l1_norm"), ("Output hash", "output_hash"), ("Location", "location")):
        if name in fields:
            meta[meta_key] = fields[name][:200]
    phase = fields.get("Phase", "forward")
    yield TraceRecord(
        checkpoint=module,
        layer=layer_of(module),
        stage=op if phase == "forward" else f"{phase[:20]}/{op}",
        step=0,
        dtype=DTYPE_ALIASES.get(dtype_m[1]) if dtype_m else None,
        shape=shape,
        numel=numel,
        stats=Stats(lo, hi, mean, rms, max(finite) if finite else None, 0, 0),
        meta=meta,
        location=where,
    )


def _leaves(text: str) -> list[tuple[str, float]]:
    out = []
    for m in _LEAF.finditer(text[: 1 << 20]):
        raw = m["value"].strip()
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else _number(str(value))
        if number is not None:
            out.append((m["path"].strip(), float(number)))
        if len(out) >= MAX_LEAVES:
            break
    return out


def _debugmode(trace: Trace, key: str, fields: dict[str, str], where: Location) -> Iterator[TraceRecord]:
    module, op = _keys(key)
    for side, name in (("input", "Input hashes"), ("output", "Output hashes")):
        for path, value in _leaves(fields.get(name, "")):
            leaf = "" if path == "<root>" else f" {path[:80]}"
            yield TraceRecord(
                checkpoint=module,
                layer=layer_of(module),
                stage=f"{op}/{side}{leaf}",
                step=0,
                dtype="f64",
                shape=(1,),
                numel=1,
                values=np.array([value]),
                stats=Stats(value, value, value, abs(value), abs(value), 0, 0)
                if math.isfinite(value)
                else Stats(None, None, None, None, None, int(math.isnan(value)), int(math.isinf(value))),
                meta={"hash": "DebugMode tensor hash (a statistic, not a digest)"},
                location=where,
            )


def _records(trace: Trace) -> Iterator[TraceRecord]:
    kind: str | None = None
    key: str | None = None
    fields: dict[str, str] = {}
    start = 0
    lineno = 0

    def flush() -> Iterator[TraceRecord]:
        if key is None:
            return
        where = Location(trace.path, line=start)
        yield from (_titan if kind == "activations" else _debugmode)(trace, key, fields, where)

    for chunk in read_line_chunks(trace):
        data = bytes(chunk)
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        for raw in lines:
            lineno += 1
            line = raw.decode("utf-8", "replace")
            if kind is None:
                m = _FIRST.match(raw)
                if m:
                    kind = m[1].decode()
                    tool = "torchtitan-numerics" if kind == "activations" else "pytorch-debugmode-hashes"
                    holds = (
                        "statistics of each op's output"
                        if kind == "activations"
                        else "a float hash of each op's tensors"
                    )
                    trace.headers.append(tool_header(tool, holds))
                continue
            block = _BLOCK.match(line)
            if block:
                yield from flush()
                key, fields, start = block["key"][:400], {}, lineno
                continue
            field = _FIELD.match(line)
            if field and key is not None and len(fields) < 64:
                fields[field["name"]] = field["value"]
    yield from flush()


register_records("numerics-text", _sniff, _records, priority=41)
