"""What a diagnosis looks at: the diverging pair and the records around it, as plain arrays.

A `Side` is one record's numbers: the whole tensor (float64, flat) when the
trace holds it, else its leading values, with the record's stats and hash.
Summaries of orchlog JSONL carry ten leading values; signatures that can work
on those say so (`THIN`), the others decline. A linear sketch of the tensor
(64 signed sums, in every record since schema 2) is read into
`Side.sketch`: linear relations (ours = c * ref; ours_t = ref_t + b with the
same b at every token) hold for sketches too, so `Pair.linear()` appends
them to the leading values. Sketch rows are signed sums, not elements: they
decide whether a relation holds, never describe its size.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from orchlog.read.batch import COUNT_FIELDS, NONE, STAT_FIELDS, RecordBatch
from orchlog.read.trace import TraceRecord
from orchlog.records import record
from orchlog.schema_gen import Stats


@record(frozen=True)
class Where:
    checkpoint: str
    layer: int | None = None
    stage: str | None = None
    token_idx: int | None = None
    step: int | None = None

    def label(self) -> str:
        parts = [self.checkpoint + (f"@{self.stage}" if self.stage else "")]
        if self.layer is not None:
            parts.append(f"layer {self.layer}")
        if self.token_idx is not None:
            parts.append(f"token {self.token_idx}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _sketch_of(raw: Any, meta: Any) -> np.ndarray | None:
    """A record's linear sketch, when its format carries one (a `sketch` field, or `meta["sketch"]`)."""
    if raw is None and isinstance(meta, dict):
        raw = meta.get("sketch")
    if raw is None:
        return None
    try:
        return np.asarray(raw, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None


@record
class Side:
    values: np.ndarray  # float64, flat: the whole tensor when `full`, else the leading values
    full: bool
    numel: int | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    stats: dict[str, float] | None = None  # min, max, mean, rms, abs_max, nan_count, inf_count
    blake3: str | None = None
    sketch: np.ndarray | None = None

    @staticmethod
    def of(array: np.ndarray, dtype: str = "f32") -> Side:
        """A whole tensor at hand (tests, `orchlog weights`)."""
        arr = np.asarray(array)
        return Side(arr.astype(np.float64).ravel(), True, arr.size, tuple(arr.shape), dtype)

    @staticmethod
    def summary(
        values: np.ndarray,
        numel: int,
        shape: tuple[int, ...] | None = None,
        stats: dict[str, float] | None = None,
        dtype: str = "f32",
        sketch: np.ndarray | None = None,
    ) -> Side:
        """A record that carries only its leading values (and stats, and perhaps a sketch)."""
        return Side(np.asarray(values, dtype=np.float64).ravel(), False, numel, shape, dtype, stats, None, sketch)

    @staticmethod
    def from_record(rec: TraceRecord) -> Side:
        return Side._made(
            rec.tensor,
            rec.values,
            rec.numel,
            tuple(rec.shape) if rec.shape is not None else None,
            rec.dtype,
            rec.stats,
            rec.blake3,
            _sketch_of(getattr(rec, "sketch", None), rec.meta),
        )

    @staticmethod
    def from_batch(batch: RecordBatch, i: int) -> Side:
        """`from_record(batch.record(i))`, read from the batch's columns: the diagnosis looks at a few
        hundred rows, and a whole record made for each was most of the time it took."""
        return Side._made(
            lambda: batch.tensor_of(i),
            batch.row_values(i).copy(),  # not a view that keeps the batch's column alive
            None if batch.numel[i] == NONE else int(batch.numel[i]),
            batch.shape_of(i),
            batch.dtype[i],
            batch.stats_of(i),
            batch.blake3[i].decode(errors="replace") or None,
            _sketch_of(batch.cell("sketch", i), batch.meta[i]),
        )

    @staticmethod
    def _made(
        tensor_of: Callable[[], np.ndarray | None],
        values: np.ndarray | None,
        numel: int | None,
        shape: tuple[int, ...] | None,
        dtype: str | None,
        stats: Stats | None,
        blake3: str | None,
        sketch: np.ndarray | None,
    ) -> Side:
        said = None
        if stats is not None:
            said = {k: getattr(stats, k) for k in STAT_FIELDS + COUNT_FIELDS if getattr(stats, k, None) is not None}
        try:
            tensor = tensor_of()
        except (OSError, ValueError):
            tensor = None
        if tensor is not None and np.issubdtype(tensor.dtype, np.number):
            flat = tensor.astype(np.float64).ravel()
            return Side(flat, True, flat.size, shape or (flat.size,), dtype, said, blake3, sketch)
        leading = np.asarray(values if values is not None else (), dtype=np.float64)
        full = numel is not None and leading.size == numel
        return Side(leading, full, numel, shape, dtype, said, blake3, sketch)

    @property
    def size(self) -> int:
        return int(self.numel) if self.numel is not None else self.values.size

    def shaped(self) -> np.ndarray | None:
        """The whole tensor in its shape (flat when the shape is unknown), or None for a summary."""
        if not self.full:
            return None
        if self.shape and int(np.prod(self.shape)) == self.values.size:
            return self.values.reshape(self.shape)
        return self.values

    def nonfinite(self) -> int | None:
        """How many NaN/Inf the whole tensor holds, or None when nothing says."""
        if self.full:
            return int(self.values.size - np.isfinite(self.values).sum())
        if self.stats and "nan_count" in self.stats:
            return int(self.stats.get("nan_count", 0)) + int(self.stats.get("inf_count", 0))
        return None


@record
class Pair:
    where: Where
    ref: Side
    ours: Side

    @property
    def full(self) -> bool:
        return self.ref.full and self.ours.full and self.ref.values.size == self.ours.values.size

    def common(self) -> tuple[np.ndarray, np.ndarray]:
        """(ref, ours): the whole tensors, else their common leading values; positions where both are finite."""
        n = min(self.ref.values.size, self.ours.values.size)
        r, o = self.ref.values[:n], self.ours.values[:n]
        ok = np.isfinite(r) & np.isfinite(o)
        return (r, o) if ok.all() else (r[ok], o[ok])

    def linear(self) -> tuple[np.ndarray, np.ndarray]:
        """common(), plus both sketches when they are there: numbers that linear relations between the
        tensors also hold between."""
        r, o = self.common()
        if self.full:
            return r, o
        sa, sb = self.ref.sketch, self.ours.sketch
        if sa is not None and sb is not None and sa.size == sb.size:
            return np.concatenate([r, sa]), np.concatenate([o, sb])
        return r, o


@record
class Reference:
    """A reference value elsewhere in the run, for `equals_other_checkpoint`: a Side, or a function that
    loads it (so that a long list of candidates is read one at a time)."""

    where: Where
    source: Side | Callable[[], Side]
    relation: str  # "earlier", "later" (same token), "other_token", "other_layer"

    def side(self) -> Side:
        return self.source if isinstance(self.source, Side) else self.source()


@record
class Case:
    pair: Pair
    tokens: list[Pair] = dataclasses.field(default_factory=list)  # same checkpoint at other tokens (and this one)
    inputs: list[Pair] = dataclasses.field(default_factory=list)  # the stage's inputs (see assemble.py)
    token_inputs: dict[int, Side] = dataclasses.field(default_factory=dict)  # the reference's input, per token
    pool: list[Reference] = dataclasses.field(default_factory=list)
    is_logits: bool = False

    @property
    def thin(self) -> bool:
        return not self.pair.full

    def typical(self) -> np.ndarray | None:
        """Each element's rms over the reference's tokens (whole tensors, three tokens or more), else None."""
        refs = [p.ref.values for p in self.token_pairs() if p.full]
        if len(refs) < 3:
            return None
        rms: np.ndarray = np.sqrt(np.mean(np.square(np.stack(refs)), axis=0))
        return rms

    def token_pairs(self) -> list[Pair]:
        """The pairs across tokens that have comparable numbers, the diverging one included."""
        pairs = self.tokens or [self.pair]
        size = self.pair.ours.values.size
        full = self.pair.full
        return [p for p in pairs if p.full == full and p.ours.values.size == size and p.ref.values.size == size]
