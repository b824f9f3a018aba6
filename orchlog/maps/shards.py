"""Tensor-parallel shards: gather a checkpoint's per-rank pieces into the tensor an unsharded run logs.

A sharded engine logs each rank's piece of a tensor (rank r of world_size W):
a column-parallel layer's output is split along one axis, a row-parallel
layer's output is a partial sum that an all-reduce adds up. How a piece was
made is said by a dims annotation, SGLang's notation, one name per axis of
the record's tensor:

    "f[tp]"          split along this axis across the tensor-parallel ranks: concatenate
    "s h[tp]"        the same for a [tokens, hidden] record: axis 1 (older spelling: "s h(tp)")
    "h[tp:partial]"  each rank holds a partial sum: add them

(orchlog/shard_dims.py has the whole notation, with fused per-shard sections, GQA groups and
replicated tensors, which `shard_dims.plan` turns into the slices a gather takes.)

Records say how they were made with their own fields (`shard_axis`,
`shard_index`, `num_shards`, `shard_partial`: every emitter takes them per
call); a name map's `[shards]` section gives the dims per canonical
checkpoint for engines that do not annotate their records. A record that
says (an axis, or shard_partial true or false) is taken at its word: its
fields win over the map's dims. `Gatherer` collects the pieces of each
checkpoint (same name, stage, layer, token, step; the k-th piece of a rank
goes with the k-th of every other) and, once all W have arrived, puts one
record in their place: rank 0 of world size 1, whose tensor is built from the
pieces when it is loaded (`Gathered`, which also says where each rank's piece
lies, so that a report can name the rank whose piece carries an error).
Pieces that cannot be put together (a rank missing, shapes that do not fit)
are reported and set aside as unmatched (`held_out`): a piece is never
compared with a whole tensor, and a missing rank is never a pass.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from orchlog import shard_dims
from orchlog.encoding import dtypes
from orchlog.maps.views import INDEX_MAP_LIMIT
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.trace import Location, TraceRecord
from orchlog.records import record
from orchlog.schema_gen import COLUMNS, Stats
from orchlog.shard_dims import Dims
from orchlog.strings import glob_matcher

__all__ = ["Dims", "Gatherer", "parse_dims"]


def parse_dims(text: str) -> Dims:
    """`"s h[tp]"` or `"s h(tp)"` -> Dims(("s", "h"), split=1); `"h[tp:partial]"` -> partial sums; the
    whole notation is orchlog.shard_dims'. A layout that gathers nothing is an error here."""
    dims = shard_dims.parse(text)
    if not dims.partial and dims.split is None and not dims.replicated:
        raise ValueError(f"dims {text!r}: no axis is marked [tp], nothing is [tp:partial] and nothing # tp:replicated")
    return dims


@record(frozen=True)
class Layout:
    """How one record is a piece of a whole: along `axis` (None: a partial sum), rank `index` of `count`."""

    axis: int | None
    index: int
    count: int
    source: str  # where the layout came from, for messages
    dims: Dims | None = None  # the map's dims, when they gave the layout


def says_layout(batch: RecordBatch) -> np.ndarray:
    """Which records say how they are laid out: a split axis, or shard_partial given (true or false)."""
    says: np.ndarray = (batch.shard_axis != NONE) | (batch.shard_partial != NONE)
    return says


def layout_of(batch: RecordBatch, i: int, dims: Dims | None) -> Layout | str | None:
    """The record's layout (from its own fields when it gives them, else from the map's dims), None when it is
    not a piece, or a message saying why it cannot be one."""
    axis, partial = int(batch.shard_axis[i]), int(batch.shard_partial[i])
    if axis != NONE or partial != NONE:  # the record says: its word wins over the map's
        count, index = int(batch.num_shards[i]), int(batch.shard_index[i])
        index = int(batch.rank[i]) if index == NONE else index  # shard_index null: the record's rank
        if partial == 1 and axis != NONE:
            return f"the record gives both shard_axis {axis} and shard_partial true; not gathered"
        if count <= 1 or (partial != 1 and axis == NONE):
            return None  # whole: one shard, or shard_partial false without an axis
        if not 0 <= index < count:
            return f"shard {index} of {count} shards is not one of them; not gathered"
        return Layout(None if partial == 1 else axis, index, count, "record")
    count = int(batch.world_size[i])
    if dims is None or count <= 1:
        return None
    shape = batch.shape_of(i)
    if shape is None or len(shape) != len(dims.names):
        return f"dims {dims.text!r} name {len(dims.names)} axes, the record has shape {shape}; not gathered"
    if dims.other:
        return f"dims {dims.text!r} split it along {', '.join(dims.other)}: orchlog gathers tensor-parallel pieces only; not gathered"
    return Layout(dims.split, int(batch.rank[i]), count, f"dims {dims.text!r}", dims)


# ---------------------------------------------------------------- the gathered tensor


def _float_out(dtype: str) -> str:
    return "f64" if dtype in ("f64", "i32", "i64") else "f32"


def load_array(load: Callable[[], bytes | memoryview], dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    flat = dtypes.from_bytes(load(), dtype)
    if dtype in ("bf16", "f16"):
        flat = dtypes.widen(flat, dtype)
    return flat.reshape(shape)


@record(frozen=True)
class Piece:
    rank: int
    load: Callable[[], bytes | memoryview] | None
    dtype: str
    shape: tuple[int, ...]
    location: str


class Gathered:
    """Loads each rank's piece and puts them together: concatenated along `axis`, or summed (axis None)."""

    def __init__(
        self, pieces: Sequence[Piece], axis: int | None, name: str, plan: list[tuple[int, int, int]] | None = None
    ) -> None:
        self.pieces, self.axis, self.name = list(pieces), axis, name
        self.out_dtype = _float_out(pieces[0].dtype)
        self.plan = plan  # (piece, start, stop) slices along axis, in the whole tensor's order (shard_dims.plan)

    def array(self) -> np.ndarray:
        parts = [load_array(p.load, p.dtype, p.shape) for p in self.pieces]  # type: ignore[arg-type]
        kind = np.float64 if self.out_dtype == "f64" else np.float32
        if self.plan is not None and self.axis is not None:
            axis = self.axis
            return np.concatenate(
                [np.take(parts[k], range(a, b), axis=axis).astype(kind, copy=False) for k, a, b in self.plan], axis=axis
            )
        if self.axis is None:
            total = np.zeros(parts[0].shape, dtype=np.float64)
            for part in parts:  # rank order, in f64: one rounding at the end
                total += part
            return total.astype(kind)
        return np.concatenate([part.astype(kind, copy=False) for part in parts], axis=self.axis)

    def __call__(self) -> memoryview:
        return np.ascontiguousarray(self.array()).data.cast("B")

    def extents(self) -> list[tuple[int, int, int]]:
        """(rank, start, stop) of each piece along the gathered axis."""
        out, start = [], 0
        if self.plan is not None:
            for k, a, b in self.plan:
                out.append((self.pieces[k].rank, start, start + b - a))
                start += b - a
            return out
        for p in self.pieces:
            out.append((p.rank, start, start + p.shape[self.axis]))  # type: ignore[index]
            start += p.shape[self.axis]  # type: ignore[index]
        return out

    def describe(self) -> str:
        ranks = f"ranks {self.pieces[0].rank}-{self.pieces[-1].rank}"
        if self.axis is None:
            return f"sum of {len(self.pieces)} partial sums ({ranks})"
        if self.plan is not None:
            used = sorted({self.pieces[k].rank for k, _, _ in self.plan})
            return f"put together along axis {self.axis} from the pieces of ranks {used} of {len(self.pieces)}"
        return f"gathered from {len(self.pieces)} shards along axis {self.axis} ({ranks})"


def _gathered_shape(pieces: Sequence[Piece], axis: int | None) -> tuple[int, ...] | str:
    first = pieces[0].shape
    for p in pieces[1:]:
        if len(p.shape) != len(first) or any(
            x != y for k, (x, y) in enumerate(zip(p.shape, first)) if axis is None or k != axis
        ):
            return f"rank {p.rank}'s piece has shape {p.shape}, rank {pieces[0].rank}'s {first}"
    if axis is None:
        return first
    return tuple(sum(p.shape[axis] for p in pieces) if k == axis else d for k, d in enumerate(first))


def _gathered_values(batch: RecordBatch, rows: list[int], pieces: list[Piece], axis: int | None) -> np.ndarray:
    """The gathered record's leading values: the longest run of the whole tensor the pieces' leading values hold."""
    values = [batch.row_values(i) for i in rows]
    if axis is None:  # a sum: as far as every piece's values reach
        n = min(len(v) for v in values)
        return np.sum([v[:n] for v in values], axis=0) if n else values[0][:0]
    if sum(math.prod(p.shape) for p in pieces) > INDEX_MAP_LIMIT:
        return values[0][:0]
    # Each element of the whole tensor as (piece, index in that piece), in the whole tensor's order.
    which = np.concatenate([np.full(p.shape, k, dtype=np.int64) for k, p in enumerate(pieces)], axis=axis).reshape(-1)
    local = np.concatenate(
        [np.arange(math.prod(p.shape), dtype=np.int64).reshape(p.shape) for p in pieces], axis=axis
    ).reshape(-1)
    held = local < np.array([len(v) for v in values])[which]
    n = int(np.argmin(held)) if not held.all() else len(held)
    flat = np.concatenate(values)
    starts = np.cumsum([0] + [len(v) for v in values[:-1]])
    out: np.ndarray = flat[starts[which[:n]] + local[:n]]
    return out


def _gathered_stats(batch: RecordBatch, rows: list[int], pieces: list[Piece], axis: int | None) -> Stats | None:
    """Whole-tensor stats of a concatenation, from the pieces' (a sum of partials has none)."""
    stats, counts = batch.stats[rows], batch.counts[rows]
    if axis is None or np.isnan(stats).any() or (counts < 0).any():
        return None
    sizes = np.array([math.prod(p.shape) for p in pieces], dtype=np.float64)
    finite = sizes - counts.sum(axis=1)
    if (finite <= 0).any():
        return None
    mean = float((stats[:, 2] * finite).sum() / finite.sum())
    rms = math.sqrt(float((stats[:, 3] ** 2 * finite).sum() / finite.sum()))
    return Stats(
        float(stats[:, 0].min()),
        float(stats[:, 1].max()),
        mean,
        rms,
        float(stats[:, 4].max()),
        nan_count=int(counts[:, 0].sum()),
        inf_count=int(counts[:, 1].sum()),
    )


# ---------------------------------------------------------------- the stage


# The record a piece stands in for (checkpoint, stage, layer, token_idx, step), and with the
# occurrence of that record on the piece's rank: the pieces of one gathered record.
_Key = tuple[str | None, str | None, int, int, int]
_Group = tuple[str | None, str | None, int, int, int, int]


class Gatherer:
    """A side's pipeline stage: pieces in, gathered records out (see the module doc)."""

    def __init__(self, shards: Sequence[tuple[str, Dims]], problem: Callable[[Location, str], None]) -> None:
        self.rules = [(glob_matcher([glob]), dims) for glob, dims in shards]
        self.problem = problem
        self._dims_cache: dict[str | None, Dims | None] = {}
        self._held = RecordBatch.empty()
        self._held_groups: list[_Group] = []
        self._occurrence: dict[tuple[_Key, int], int] = {}
        self._layouts: list[Layout] = []
        self.gathered = 0
        self.held_out: list[RecordBatch] = []  # pieces that could not be gathered

    @property
    def active(self) -> bool:
        return bool(self.rules)

    @property
    def holding(self) -> bool:
        """Whether pieces read so far wait for their partners (a record of them comes out later)."""
        return len(self._held) > 0

    def _dims(self, checkpoint: str | None) -> Dims | None:
        if checkpoint not in self._dims_cache:
            self._dims_cache[checkpoint] = next((d for m, d in self.rules if m(checkpoint)), None)
        return self._dims_cache[checkpoint]

    def __call__(self, batch: RecordBatch) -> RecordBatch:
        if not len(batch):
            return batch
        says = says_layout(batch)
        candidates = np.flatnonzero(says | (batch.world_size > 1) if self.rules else says)
        if not len(candidates):
            return batch
        pieces, layouts = [], []
        for i in candidates.tolist():
            layout = layout_of(batch, i, self._dims(batch.checkpoint[i]))
            if isinstance(layout, str):
                self.problem(batch.location(i), layout)
            elif layout is not None:
                pieces.append(i)
                layouts.append(layout)
        if not pieces:
            return batch
        keep = np.setdiff1d(np.arange(len(batch)), pieces)
        new = batch.take(pieces)
        for k, layout in enumerate(layouts):
            key = (new.checkpoint[k], new.stage[k], int(new.layer[k]), int(new.token_idx[k]), int(new.step[k]))
            rank_key = (key, layout.index)
            nth = self._occurrence.get(rank_key, 0)
            self._occurrence[rank_key] = nth + 1
            self._held_groups.append((*key, nth))
        self._layouts += layouts
        self._held = RecordBatch.concat([self._held, new])
        done = self._complete()
        return RecordBatch.concat([batch.take(keep), done]) if len(done) else batch.take(keep)

    def _complete(self) -> RecordBatch:
        members: dict[_Group, list[int]] = {}
        for row, group in enumerate(self._held_groups):
            members.setdefault(group, []).append(row)
        records, firsts, refused, used = [], [], [], set()
        for rows in members.values():
            if len({self._layouts[r].index for r in rows}) < self._layouts[rows[0]].count:
                continue
            used.update(rows)
            rows = sorted(rows, key=lambda r: self._layouts[r].index)
            record = self._gather(rows)
            if isinstance(record, str):
                r = rows[0]
                self.problem(
                    self._held.location(r),
                    f"{self._held.checkpoint[r]} not gathered: {record}; its pieces are left unmatched",
                )
                refused += rows
            else:
                records.append(record)
                firsts.append(rows[0])
        if not used:
            return RecordBatch.empty()
        out = []
        if records:
            gathered = RecordBatch.from_records(records)
            assert self._held.renamed_from is not None, "RecordBatch.__post_init__ fills it"
            gathered.renamed_from = self._held.renamed_from[np.asarray(firsts)]
            out.append(gathered)
        if refused:
            self.held_out.append(self._held.take(refused))
        rest = [r for r in range(len(self._held_groups)) if r not in used]
        self._held = self._held.take(rest)
        self._held_groups = [self._held_groups[r] for r in rest]
        self._layouts = [self._layouts[r] for r in rest]
        self.gathered += len(records)
        return RecordBatch.concat(out) if out else RecordBatch.empty()

    def _gather(self, rows: list[int]) -> TraceRecord | str:
        """The record that stands for the pieces `rows` (in rank order), or why there is none."""
        held, layouts = self._held, [self._layouts[r] for r in rows]
        if len({(x.axis, x.count) for x in layouts}) > 1 or len({held.dtype[r] for r in rows}) > 1:
            return "its pieces disagree on their layout or dtype"
        pieces = [
            Piece(x.index, held.loader_of(r), held.dtype[r] or "f32", held.shape_of(r) or (), str(held.location(r)))
            for r, x in zip(rows, layouts)
        ]
        axis = layouts[0].axis
        if any(not p.shape for p in pieces):
            return "a piece has no shape"
        if axis is not None and not -len(pieces[0].shape) <= axis < len(pieces[0].shape):
            return f"axis {axis} is out of range for shape {pieces[0].shape}"
        axis = None if axis is None else axis % len(pieces[0].shape)
        shape = _gathered_shape(pieces, axis)
        if isinstance(shape, str):
            return shape
        dims, plan = layouts[0].dims, None
        if dims is not None and (dims.sections or dims.groups or dims.replicated):
            axis = dims.split if dims.split is not None else 0
            made = shard_dims.plan(dims, pieces[0].shape[axis], len(pieces))
            if isinstance(made, str):
                return made
            plan = made
            shape = tuple(sum(b - a for _, a, b in plan) if k == axis else d for k, d in enumerate(pieces[0].shape))
        first = held.record(rows[0])
        loaded = all(p.load is not None for p in pieces)
        gathered = Gathered(pieces, axis, first.checkpoint, plan)
        return dataclasses.replace(
            first,
            rank=0,
            world_size=1,
            shard_axis=None,
            shard_index=None,
            num_shards=1,
            shard_partial=None,
            dtype=gathered.out_dtype if loaded else first.dtype,
            shape=shape,
            numel=math.prod(shape),
            values=_gathered_values(held, rows, pieces, axis) if plan is None else None,
            stats=_gathered_stats(held, rows, pieces, axis) if plan is None else None,
            blake3=None,
            # A digest of one piece says nothing of the whole (the sketch of a concatenation is not its
            # pieces' sketches): the gathered record has none.
            **_NO_DIGEST_FLOATS,
            location=Location(f"{first.location} ({gathered.describe()})"),
            loader=gathered if loaded else None,
        )

    def flush(self) -> None:
        """Pieces that never completed are set aside as unmatched, each missing rank reported."""
        if not len(self._held):
            return
        members: dict[_Group, list[int]] = {}
        for row, group in enumerate(self._held_groups):
            members.setdefault(group, []).append(row)
        for group, rows in members.items():
            have = sorted(self._layouts[r].index for r in rows)
            count = self._layouts[rows[0]].count
            r = rows[0]
            self.problem(
                self._held.location(r),
                f"{group[0]} has the pieces of ranks {have} of {count}; missing "
                f"{_missing_ranks(have, count)}: not gathered",
            )
        self.held_out.append(self._held)
        self._held, self._held_groups, self._layouts = RecordBatch.empty(), [], []


# The digest floats of a record (the sketch), none for a gathered one.
_NO_DIGEST_FLOATS: dict[str, Any] = {c.name: None for c in COLUMNS if c.kind == "floats"}


def _missing_ranks(have: list[int], count: int) -> str:
    """The ranks in 0..count-1 not in `have` (sorted), as runs (`[0, 2-5]`): a damaged record's count
    can be 2**31 - 1, so the ranks are never listed one by one."""
    runs, start = [], 0
    for index in [*have, count]:
        if index > start:
            runs.append(str(start) if index == start + 1 else f"{start}-{index - 1}")
        start = max(start, index + 1)
    return "[" + ", ".join(runs) + "]"
