"""llama.cpp's eval-callback printout (`common/debug.cpp`: llama-eval-callback, llama-debug) and the
PyTorch-side twin that its model-conversion scripts print (`scripts/utils/common.py summarize`).

    common_debug_cb_eval:              attn_norm-0 = (f32)        MUL(norm-0{64, 5, 1, 1}, ...}) = {64, 5, 1, 1}
        [
            [
                [     -0.1234,       0.5678,       0.9012, ...,       0.1,       0.2,       0.3  ],
                ...
            ],
        ]
        sum = 1.234567
    ggml_debug: model.layers.0.mlp_out = (f32)  ... = {torch.Size([1, 5, 64])}
                                          [-0.1234, 0.5678, 0.9012, ..., 0.1, 0.2, 0.3]
                                         sum = 1.234567

What a block holds becomes a summary record: the leading values up to the first `...` (the
tensor's first elements, in C order), the last printed values in meta `trailing`, and the sum as
meta `sum` and as the mean (sum / numel). Values are printed with 4 decimals and the sum with 6,
accumulated in f32 by the printer: a weak bound, good for "which layer went wrong", not for ULPs.

Keys follow orchlog's ggml adapter for the eval callback: `attn_norm-3` is checkpoint `attn_norm`,
layer 3; a name met again in the same graph gets the op (`mul_mat`, `add`, `rope`) as its stage;
shape is ggml's ne reversed (outermost first) without leading 1s. The twin's names are module paths
with `_in`/`_out`: checkpoint the path, stage `input` for `_in`, as orchlog.torch logs them. A graph
(or forward call) that starts again is the next step.
"""

from __future__ import annotations

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

_HEAD = re.compile(
    rb"^(?P<fn>common_debug_cb_eval|ggml_debug|[a-z_]+_cb_eval): +(?P<name>\S.*?) = \((?P<type>\w+)\) +"
    rb"(?P<op>.*?) = \{(?P<shape>[^{}]*)\}\s*$"
)
_NUMBER = re.compile(rb"[-+]?(?:nan|inf|[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?)", re.IGNORECASE)
# A row of printed values holds brackets, commas, dots and numbers only (other log lines interleave);
# told apart by its characters, in linear time.
_VALUE_CHARS = b" \t\r[],.0123456789eE+-nNaAiIfF"
_SUM = re.compile(rb"^\s*sum = (\S+)\s*$")
_SIZE = re.compile(r"torch\.Size\(\[([0-9, ]*)\]\)")
_LAYER_SUFFIX = re.compile(r"^(?P<name>.+)-(?P<layer>[0-9]{1,9})$")
MAX_DIMS = 8
SNIFF = re.compile(rb"(?m)^(?:common_debug_cb_eval|ggml_debug): +\S.* = \(\w+\) ")


def _sniff(path: Path, head: bytes) -> bool:
    return SNIFF.search(head[:16384]) is not None


class _Block:
    def __init__(self, m: re.Match[bytes], line: int) -> None:
        self.fn = m["fn"].decode()
        self.name = m["name"].decode("utf-8", "replace").strip()
        self.type = m["type"].decode()
        self.op = m["op"].decode("utf-8", "replace").strip()
        self.shape_text = m["shape"].decode("utf-8", "replace")
        self.line = line
        self.leading: list[float] = []
        self.trailing: list[float] = []
        self.skipped = False  # a "..." seen: leading values are complete
        self.sum: float | None = None

    def values_line(self, line: bytes) -> None:
        """One printed row: numbers, perhaps with `...` where the printer skipped some."""
        parts = line.split(b"...")
        for k, part in enumerate(parts):
            nums = [_float(x) for x in _NUMBER.findall(part)]
            if not self.skipped:
                self.leading += nums
            self.trailing = (self.trailing + nums)[-6:]
            if k < len(parts) - 1:
                self.skipped = True


def _float(raw: bytes) -> float:
    try:
        return float(raw)
    except ValueError:
        return math.nan


def _twin_shape(text: str) -> tuple[int, ...] | None:
    m = _SIZE.search(text)
    if not m:
        return None
    dims = [int(d) for d in m[1].replace(" ", "").split(",") if d]
    return tuple(dims) if len(dims) <= MAX_DIMS and all(d < 2**40 for d in dims) else None


def _ggml_shape(text: str) -> tuple[int, ...] | None:
    try:
        ne = [int(d) for d in text.replace(" ", "").split(",") if d]
    except ValueError:
        return None
    if not ne or len(ne) > MAX_DIMS or any(d < 0 or d >= 2**40 for d in ne):
        return None
    shape = list(reversed(ne))
    while len(shape) > 1 and shape[0] == 1:
        shape.pop(0)
    return tuple(shape)


class _Keys:
    """Checkpoint, layer, stage and step of each block, the way orchlog's own adapters key them."""

    def __init__(self) -> None:
        self.step = 0
        self.first: tuple[str, str] | None = None
        self.seen: set[tuple[str, int | None]] = set()

    def of(self, b: _Block) -> dict[str, Any]:
        if b.fn == "ggml_debug":  # the PyTorch twin: module paths with _in / _out
            name, stage = b.name, None
            if name.endswith("_in"):
                name, stage = name[:-3], "input"
            elif name.endswith("_out"):
                name = name[:-4]
            self.next_graph(b, name, stage)
            return {"checkpoint": name, "layer": layer_of(name), "stage": stage, "step": self.step}
        m = _LAYER_SUFFIX.match(b.name)
        name, layer = (m["name"], int(m["layer"])) if m else (b.name, None)
        op = b.op.split("(", 1)[0].strip().lower()
        self.next_graph(b, b.name, op)
        stage = None
        if (name, layer) in self.seen:
            stage = op or None
        self.seen.add((name, layer))
        return {"checkpoint": name, "layer": layer, "stage": stage, "step": self.step}

    def next_graph(self, b: _Block, name: str, what: str | None) -> None:
        key = (name, what or "")
        if self.first is None:
            self.first = key
        elif key == self.first:
            self.step += 1
            self.seen.clear()


def _record(trace: Trace, b: _Block, keys: _Keys) -> TraceRecord | None:
    shape = _twin_shape(b.shape_text) if b.fn == "ggml_debug" else _ggml_shape(b.shape_text)
    where = Location(trace.path, line=b.line)
    if shape is None:
        trace.report(where, f"{b.name}: shape {b.shape_text[:60]!r} not understood; skipped")
        return None
    numel = math.prod(shape)
    k = keys.of(b)
    dtype = DTYPE_ALIASES.get(b.type, None)
    leading = b.leading if b.skipped or len(b.leading) <= numel else b.leading[:numel]
    meta: dict[str, Any] = {"op": b.op[:120]} if b.fn != "ggml_debug" else {}
    if b.trailing and b.skipped:
        meta["trailing"] = ", ".join(f"{v:.4f}" for v in b.trailing[-3:])
    mean = None
    if b.sum is not None:
        meta["sum"] = b.sum
        mean = b.sum / numel if numel and math.isfinite(b.sum) else None
    return TraceRecord(
        checkpoint=k["checkpoint"],
        layer=k["layer"],
        stage=k["stage"],
        step=k["step"],
        dtype=dtype,
        shape=shape,
        numel=numel,
        values=np.asarray(leading, dtype=np.float64),
        stats=Stats(None, None, mean, None, None, 0, 0),
        meta=meta,
        location=where,
    )


def _records(trace: Trace) -> Iterator[TraceRecord]:
    keys = _Keys()
    block: _Block | None = None
    lineno = 0
    headed = False
    for chunk in read_line_chunks(trace):
        data = bytes(chunk)
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        for line in lines:
            lineno += 1
            head = _HEAD.match(line)
            if head:
                if block is not None:
                    rec = _record(trace, block, keys)
                    if rec is not None:
                        yield rec
                block = _Block(head, lineno)
                if not headed:
                    headed = True
                    twin = block.fn == "ggml_debug"
                    trace.headers.append(
                        tool_header(
                            "pytorch-twin (llama.cpp model-conversion)" if twin else "llama.cpp eval-callback",
                            "leading and trailing values (4 decimals) and the sum of each tensor",
                            language="python" if twin else "cpp",
                        )
                    )
                continue
            if block is None:
                continue
            s = _SUM.match(line)
            if s:
                block.sum = _float(s[1])
            elif line.strip() and not line.translate(None, _VALUE_CHARS):
                block.values_line(line)
    if block is not None:
        rec = _record(trace, block, keys)
        if rec is not None:
            yield rec


register_records("llama-debug-text", _sniff, _records, priority=40)
