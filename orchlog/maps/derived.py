"""Derived checkpoints: a canonical checkpoint computed from other records of the same side at the same key.

Engines do not all log the points a reference logs. vLLM keeps the residual
stream apart (a decoder layer returns `hidden` and `residual`, whose sum is
what llama.cpp calls `l_out`); an engine may log a norm's input but not its
output, or a fused QKV projection instead of Q, K and V. A name map's
`[derived]` section says how to compute the canonical checkpoint from what
the engine did log:

    [derived."l_out"]
    sum = ["ffn_out", "ffn_inp"]                     # element-wise sum of the parts

    [derived."ffn_norm"]
    rms_norm = "ffn_inp"                             # x / sqrt(mean(x^2) + eps) * weight
    weight = "weights/blk.{layer}.ffn_norm.npy"      # .npy, beside the map file; {layer} is the record's
    eps = 1e-6

    [derived."Qcur@add"]                             # `name@stage`: the derived record's stage
    of = "qkv"                                       # one part, looked at through view operations
    slice = "0:64"

Parts are canonical names (after [names]) of records the side logged or
gathered (not of other derived records); `name@stage` picks that stage, a
plain name the records without one. The parts of one derived record share
their layer, token, step and rank (the k-th record of each part goes with the
k-th of the others). Any derived record may end with view operations
(orchlog.maps.views), applied to the result. Parts stay in the trace and
are compared under their own names too; the derived record is added after
them, its tensor computed only when the comparison loads it. Keys for which
a part never came are counted and reported.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.errors import OrchlogError
from orchlog.maps.shards import load_array
from orchlog.maps.views import OPS, View, ViewError, parse_view, viewed_values
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import Location, TraceRecord
from orchlog.records import record

KINDS = ("sum", "rms_norm", "of")
Part = tuple[str, str | None]  # (checkpoint, stage)
# (spec index, layer, token_idx, step, rank) of a derived record, and a part's index in the spec or the
# occurrence of that record: the parts seen, and the parts waiting for the rest of one derived record.
_Occurrence = tuple[int, int | None, int | None, int | None, int | None, int]


def _part(text: Any, where: str) -> Part:
    if not isinstance(text, str) or not text:
        raise OrchlogError(f"{where}: parts are canonical names, optionally name@stage")
    name, sep, stage = text.partition("@")
    return name, (stage or None) if sep else None


def _part_text(part: Part) -> str:
    return part[0] if part[1] is None else f"{part[0]}@{part[1]}"


@record(frozen=True)
class DerivedSpec:
    checkpoint: str
    stage: str | None
    kind: str  # one of KINDS
    parts: tuple[Part, ...]
    view: View = View(())
    weight: str | None = None  # rms_norm: .npy path, {layer} filled in
    eps: float = 0.0
    base: Path | None = None  # where relative weight paths start

    def describe(self) -> str:
        names = [_part_text(p) for p in self.parts]
        text = {
            "sum": " + ".join(names),
            "rms_norm": f"rms_norm({names[0]}) * {self.weight}",
            "of": names[0],
        }[self.kind]
        return f"{text} viewed as {self.view.describe()}" if self.view else text

    def weight_path(self, layer: int | None) -> Path:
        text = self.weight or ""
        if "{layer}" in text:
            if layer is None:
                raise OrchlogError(f"{text}: the record has no layer to fill in")
            text = text.replace("{layer}", str(layer))
        path = Path(text)
        return path if path.is_absolute() or self.base is None else self.base / path


def parse_derived(table: Any, where: str, base: Path | None) -> list[DerivedSpec]:
    if not isinstance(table, dict):
        raise OrchlogError(f"{where}: [derived] must hold one table per derived checkpoint")
    specs = []
    for target, body in table.items():
        here = f"{where}: [derived] {target!r}"
        if not isinstance(body, dict):
            raise OrchlogError(f'{here} must be a table such as {{ sum = ["a", "b"] }}')
        kinds = [k for k in KINDS if k in body]
        if len(kinds) != 1:
            raise OrchlogError(f"{here} needs exactly one of {', '.join(KINDS)}")
        unknown = set(body) - {*KINDS, "weight", "eps", *OPS}
        if unknown:
            raise OrchlogError(f"{here}: unknown key(s) {', '.join(sorted(unknown))}")
        kind = kinds[0]
        raw = body[kind]
        if kind == "sum":
            if not isinstance(raw, list) or len(raw) < 2:
                raise OrchlogError(f"{here}: sum needs a list of at least two parts")
            parts = tuple(_part(p, here) for p in raw)
        else:
            parts = (_part(raw, here),)
        if kind == "rms_norm" and not isinstance(body.get("weight"), str):
            raise OrchlogError(f'{here}: rms_norm needs weight = "file.npy" ({{layer}} is filled in)')
        eps = body.get("eps", 0.0)
        if not isinstance(eps, (int, float)) or isinstance(eps, bool) or eps < 0:
            raise OrchlogError(f"{here}: eps must be a number >= 0")
        try:
            view = parse_view([(k, v) for k, v in body.items() if k in OPS])
        except OrchlogError as exc:
            raise OrchlogError(f"{here}: {exc}") from None
        name, sep, stage = target.partition("@")
        if not name:
            raise OrchlogError(f"{here}: the derived checkpoint needs a name")
        specs.append(DerivedSpec(name, stage or None, kind, parts, view, body.get("weight"), float(eps), base))
    return specs


# ---------------------------------------------------------------- computing


def _load_weight(path: Path) -> np.ndarray:
    try:
        weight = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the weight {path} ({exc})") from None
    return np.asarray(weight, dtype=np.float64).reshape(-1)


@record(frozen=True)
class Input:
    load: Callable[[], bytes]
    dtype: str
    shape: tuple[int, ...]


def compute(spec: DerivedSpec, arrays: Sequence[np.ndarray], weight: np.ndarray | None) -> np.ndarray:
    """The derived tensor from its parts' tensors (f32 when every part fits f32, else f64)."""
    kind = np.float32 if all(a.dtype in (np.float32, np.float16) for a in arrays) else np.float64
    if spec.kind == "sum":
        out = (
            np.sum([a.astype(np.float64) for a in arrays], axis=0) if kind == np.float64 else sum(arrays[1:], arrays[0])
        )
    elif spec.kind == "rms_norm":
        x = arrays[0].astype(np.float64)
        scale = 1.0 / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + spec.eps)
        out = x * scale * weight
    else:
        out = arrays[0]
    return spec.view.apply(np.asarray(out).astype(kind, copy=False))


class Derived:
    """A derived record's loader: loads the parts and computes the tensor when asked; says how, for reports."""

    def __init__(self, spec: DerivedSpec, inputs: Sequence[Input], weight: np.ndarray | None, out_dtype: str) -> None:
        self.spec, self.inputs, self.weight, self.out_dtype = spec, list(inputs), weight, out_dtype

    def array(self) -> np.ndarray:
        return compute(self.spec, [load_array(p.load, p.dtype, p.shape) for p in self.inputs], self.weight)

    def __call__(self) -> memoryview:
        kind = np.float64 if self.out_dtype == "f64" else np.float32
        return np.ascontiguousarray(self.array(), dtype=kind).data.cast("B")

    def describe(self) -> str:
        return f"derived: {self.spec.describe()}"


class Deriver:
    """A side's pipeline stage: every record passes; derived records are added once their parts are in."""

    def __init__(self, specs: Sequence[DerivedSpec], problem: Callable[[Location, str], None]) -> None:
        self.specs = list(specs)
        self.problem = problem
        # Looked up by each record's (checkpoint, stage) as the batch holds them (None where absent).
        self._by_part: dict[tuple[str | None, str | None], list[tuple[int, int]]] = {}
        for s, spec in enumerate(self.specs):
            for k, part in enumerate(spec.parts):
                self._by_part.setdefault(part, []).append((s, k))
        self._waiting: dict[_Occurrence, dict[int, TraceRecord]] = {}
        self._seen: dict[_Occurrence, int] = {}
        self._weights: dict[Path, np.ndarray | str] = {}
        self.derived = 0
        self.incomplete: dict[int, int] = {}  # spec index -> keys whose parts never all came

    @property
    def holding(self) -> bool:
        """Whether parts read so far wait for the rest (their derived record comes out later)."""
        return bool(self._waiting)

    def __call__(self, batch: RecordBatch) -> RecordBatch:
        if not self.specs or not len(batch):
            return batch
        keys = list(zip(batch.checkpoint.tolist(), batch.stage.tolist()))
        hits = [i for i, key in enumerate(keys) if key in self._by_part]
        out: list[TraceRecord] = []
        for i in hits:
            rec = batch.record(i, own=True)  # it may wait for its other parts past this batch
            for s, k in self._by_part[keys[i]]:
                where = (s, rec.layer, rec.token_idx, rec.step, rec.rank)
                part_key = (*where, k)
                nth = self._seen.get(part_key, 0)
                self._seen[part_key] = nth + 1
                group_key = (*where, nth)
                group = self._waiting.setdefault(group_key, {})
                group[k] = rec
                if len(group) == len(self.specs[s].parts):
                    del self._waiting[group_key]
                    made = self._derive(self.specs[s], [group[p] for p in range(len(group))])
                    if made is not None:
                        out.append(made)
        if not out:
            return batch
        self.derived += len(out)
        return RecordBatch.concat([batch, RecordBatch.from_records(out)])

    def _weight(self, spec: DerivedSpec, layer: int | None) -> np.ndarray:
        path = spec.weight_path(layer)
        if path not in self._weights:
            try:
                self._weights[path] = _load_weight(path)
            except ValueError as exc:
                self._weights[path] = str(exc)
        found = self._weights[path]
        if isinstance(found, str):
            raise ValueError(found)
        return found

    def _derive(self, spec: DerivedSpec, parts: list[TraceRecord]) -> TraceRecord | None:
        first, last = parts[0], max(parts, key=lambda r: r.order)
        try:
            shapes = [p.shape if p.shape is not None else ((p.numel,) if p.numel is not None else None) for p in parts]
            shape = shapes[0]
            if shape is None or any(s != shape for s in shapes):
                raise ValueError(f"the parts' shapes differ or are unknown ({shapes})")
            weight = self._weight(spec, first.layer) if spec.kind == "rms_norm" else None
            if weight is not None and weight.size != shape[-1]:
                raise ValueError(f"the weight has {weight.size} values for an axis of {shape[-1]}")
            out_shape = spec.view.shape(shape)
            values = self._values(spec, parts, shape, weight)
        except (ValueError, ViewError, OrchlogError) as exc:
            self.problem(last.location or Location(""), f"derived {spec.checkpoint} not made: {exc}")
            return None
        loaded = all(p.loader is not None and p.dtype is not None for p in parts)
        wide = any(p.dtype not in ("f32", "f16", "bf16") for p in parts)
        out_dtype = "f64" if wide else "f32"
        loader = None
        if loaded:
            loader = Derived(spec, [Input(p.loader, p.dtype, shape) for p in parts], weight, out_dtype)  # type: ignore[arg-type]
        return TraceRecord(
            checkpoint=spec.checkpoint,
            team=first.team,
            token_idx=first.token_idx,
            layer=first.layer,
            stage=spec.stage,
            step=first.step,
            rank=first.rank,
            world_size=first.world_size,
            seq=last.seq,
            dtype=out_dtype if loaded else first.dtype,
            shape=out_shape,
            numel=math.prod(out_shape),
            values=values,
            location=Location(f"derived {spec.describe()} from {', '.join(str(p.location) for p in parts)}"),
            order=last.order,
            loader=loader,
        )

    @staticmethod
    def _values(
        spec: DerivedSpec, parts: list[TraceRecord], shape: tuple[int, ...], weight: np.ndarray | None
    ) -> np.ndarray:
        """Leading values of the derived tensor, from the parts' leading values where they say enough."""
        values = [np.asarray(p.values if p.values is not None else [], dtype=np.float64) for p in parts]
        numel = math.prod(shape)
        if spec.kind == "sum":
            n = min(len(v) for v in values)
            result: np.ndarray = np.sum([v[:n] for v in values], axis=0)
        elif spec.kind == "rms_norm":
            if len(values[0]) < numel:
                return values[0][:0]  # the norm needs every element
            plain = dataclasses.replace(spec, view=View(()))
            result = np.asarray(compute(plain, [values[0].reshape(shape)], weight), dtype=np.float64).reshape(-1)
        else:
            result = values[0]
        if not spec.view:
            return result
        if len(result) == numel:
            return np.asarray(spec.view.apply(result.reshape(shape)), dtype=np.float64).reshape(-1)
        return viewed_values(result, spec.view.index_prefix(shape), spec.view.cast)

    def flush(self) -> RecordBatch:
        for s, *_ in self._waiting:
            self.incomplete[s] = self.incomplete.get(s, 0) + 1
        for s, n in self.incomplete.items():
            spec = self.specs[s]
            self.problem(
                Location(""), f"derived {spec.checkpoint}: {n} key(s) lacked a part of {spec.describe()}; not made"
            )
        self._waiting.clear()
        return RecordBatch.empty()
