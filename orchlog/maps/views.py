"""Layout views: how one side's tensor is looked at before it is compared (a name map's `permute`,
`reshape`, `transpose`, `slice`, `dtype`).

A `View` is a sequence of operations on a tensor of a known shape. It never
touches data until the tensor is asked for: `Viewed` wraps a record's loader
and applies the view when the comparison loads the tensor, as NumPy views
where NumPy can (slices, permutations and reshapes of contiguous data copy
nothing; the bytes handed on must be C-ordered, so a permuted tensor is
copied once, as the metric kernels would copy it anyway). Shapes are worked
out from the record's shape alone (`View.shape`), so the comparer sees the
viewed shape before any tensor is read.

Operations, in the order a map writes them:
    slice = "0, :, 1:5"     NumPy basic indexing: integers drop an axis, start:stop:step, `...`
    permute = [1, 0, 2]     the axes in their new order
    transpose = [1, 2]      swap two axes
    reshape = [0, -1, 2]    0 keeps that axis's extent, -1 is inferred (ONNX's rule), so
                            a map need not know a model's head count
    dtype = "bf16"          round to f16, bf16, f32 or f64 (a copy)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from orchlog.encoding import dtypes
from orchlog.errors import OrchlogError
from orchlog.read.batch import NONE
from orchlog.records import record
from orchlog.strings import Strings

if TYPE_CHECKING:  # apply_view imports the batch module itself, when it is called
    from orchlog.read.batch import RecordBatch

Shape = tuple[int, ...]
CASTS = ("f16", "bf16", "f32", "f64")
# Leading values of a viewed record are found through an index map of the whole
# tensor; past this many elements a summary record's view keeps no leading values.
INDEX_MAP_LIMIT = 1 << 22


class ViewError(ValueError):
    """A view that cannot apply to a record's shape (the message says why)."""


def _axis(axis: int, ndim: int, op: str) -> int:
    if not -ndim <= axis < ndim:
        raise ViewError(f"{op}: axis {axis} is out of range for {ndim} axes")
    return axis % ndim


@record(frozen=True)
class Slice:
    index: tuple[Any, ...] = dataclasses.field(compare=False)  # ints, slices and Ellipsis (slices hash by text)
    text: str = ""

    def shape(self, shape: Shape) -> Shape:
        return _index_shape(self.index, shape, self.text)

    def apply(self, arr: np.ndarray) -> np.ndarray:
        sliced: np.ndarray = arr[self.index]
        return sliced

    def describe(self) -> str:
        return f"slice [{self.text}]"


@record(frozen=True)
class Permute:
    axes: tuple[int, ...]

    def shape(self, shape: Shape) -> Shape:
        if sorted(self.axes) != list(range(len(shape))):
            raise ViewError(f"permute {list(self.axes)} is not a permutation of {len(shape)} axes")
        return tuple(shape[a] for a in self.axes)

    def apply(self, arr: np.ndarray) -> np.ndarray:
        permuted: np.ndarray = arr.transpose(self.axes)
        return permuted

    def describe(self) -> str:
        return f"permute {list(self.axes)}"


@record(frozen=True)
class Transpose:
    first: int
    second: int

    def _axes(self, ndim: int) -> list[int]:
        axes = list(range(ndim))
        i, j = _axis(self.first, ndim, "transpose"), _axis(self.second, ndim, "transpose")
        axes[i], axes[j] = axes[j], axes[i]
        return axes

    def shape(self, shape: Shape) -> Shape:
        return tuple(shape[a] for a in self._axes(len(shape)))

    def apply(self, arr: np.ndarray) -> np.ndarray:
        transposed: np.ndarray = arr.transpose(self._axes(arr.ndim))
        return transposed

    def describe(self) -> str:
        return f"transpose [{self.first}, {self.second}]"


@record(frozen=True)
class Reshape:
    dims: tuple[int, ...]

    def shape(self, shape: Shape) -> Shape:
        out = []
        for k, d in enumerate(self.dims):
            if d == 0:
                if k >= len(shape):
                    raise ViewError(f"reshape {list(self.dims)}: 0 at position {k} has no axis to copy in {shape}")
                out.append(shape[k])
            else:
                out.append(d)
        numel = math.prod(shape)
        if out.count(-1) == 1:
            known = math.prod(d for d in out if d != -1)
            if known == 0 or numel % known:
                raise ViewError(f"reshape {list(self.dims)}: {shape} does not divide into it")
            out[out.index(-1)] = numel // known
        if math.prod(out) != numel:
            raise ViewError(f"reshape {list(self.dims)}: {shape} holds {numel} elements, not {math.prod(out)}")
        return tuple(out)

    def apply(self, arr: np.ndarray) -> np.ndarray:
        return arr.reshape(self.shape(arr.shape))

    def describe(self) -> str:
        return f"reshape {list(self.dims)}"


@record(frozen=True)
class Cast:
    dtype: str

    def shape(self, shape: Shape) -> Shape:
        return shape

    def apply(self, arr: np.ndarray) -> np.ndarray:
        return round_to(arr, self.dtype)

    def describe(self) -> str:
        return f"dtype {self.dtype}"


Op = Slice | Permute | Transpose | Reshape | Cast
_REORDERS = (Permute, Transpose, Reshape)  # every element kept, only their order changes


def round_to(arr: np.ndarray, dtype: str) -> np.ndarray:
    """Values rounded to `dtype` and held in a type NumPy computes with (bf16 and f16 as f32)."""
    x = np.asarray(arr)
    if dtype == "f64":
        return x.astype(np.float64)
    if dtype == "f32":
        return x.astype(np.float32)
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float32)
    # bf16: round to nearest even on the f32 bits; NaN stays NaN.
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    out = rounded.view(np.float32)
    kept: np.ndarray = np.where(np.isnan(x), np.float32(np.nan), out)
    return kept


def _index_shape(index: tuple[Any, ...], shape: Shape, text: str) -> Shape:
    ellipses = sum(1 for item in index if item is Ellipsis)
    if ellipses > 1:
        raise ViewError(f"slice [{text}]: at most one ...")
    explicit = len(index) - ellipses
    if explicit > len(shape):
        raise ViewError(f"slice [{text}] indexes {explicit} axes of a tensor with {len(shape)}")
    items: list[Any] = []
    for item in index:
        items.extend([slice(None)] * (len(shape) - explicit) if item is Ellipsis else [item])
    items.extend([slice(None)] * (len(shape) - len(items)))
    out = []
    for item, extent in zip(items, shape):
        if isinstance(item, int):
            if not -extent <= item < extent:
                raise ViewError(f"slice [{text}]: index {item} is out of range for an axis of {extent}")
        else:
            out.append(len(range(*item.indices(extent))))
    return tuple(out)


def parse_slice(text: str) -> Slice:
    """`"0, :, 1:5"` -> Slice((0, slice(None), slice(1, 5))); `"..., 0"` works too."""
    items: list[Any] = []
    for part in (p.strip() for p in text.split(",")):
        if part == "...":
            items.append(Ellipsis)
            continue
        try:
            if ":" in part:
                bounds = [int(x) if x.strip() else None for x in part.split(":")]
                if len(bounds) > 3 or bounds[2:3] == [0]:
                    raise ValueError
                items.append(slice(*bounds))
            else:
                items.append(int(part))
        except ValueError:
            raise OrchlogError(
                f'slice "{text}": items must be integers, start:stop[:step] or ..., separated by commas'
            ) from None
    return Slice(tuple(items), text)


def _int_list(value: Any, op: str, length: int | None = None) -> tuple[int, ...]:
    ok = isinstance(value, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    if not ok or (length is not None and len(value) != length):
        size = f"{length} " if length is not None else ""
        raise OrchlogError(f"{op} must be a list of {size}integers, got {value!r}")
    return tuple(value)


def parse_op(name: str, value: Any) -> Op:
    """One operation from a map: its key and value (see the module doc)."""
    if name == "slice":
        if not isinstance(value, str):
            raise OrchlogError(f'slice must be a string such as "0, :, 1:5", got {value!r}')
        return parse_slice(value)
    if name == "permute":
        return Permute(_int_list(value, "permute"))
    if name == "transpose":
        return Transpose(*_int_list(value, "transpose", 2))
    if name == "reshape":
        dims = _int_list(value, "reshape")
        if any(d < -1 for d in dims) or dims.count(-1) > 1:
            raise OrchlogError(f"reshape {list(dims)}: extents are >= 0 (0 keeps an axis) with at most one -1")
        return Reshape(dims)
    if name == "dtype":
        if value not in CASTS:
            raise OrchlogError(f"dtype {value!r}: choose one of {', '.join(CASTS)}")
        return Cast(value)
    raise OrchlogError(f"unknown view operation {name!r}")


OPS = ("slice", "permute", "transpose", "reshape", "dtype")


@record(frozen=True)
class View:
    ops: tuple[Op, ...]

    def __bool__(self) -> bool:
        return bool(self.ops)

    def shape(self, shape: Shape) -> Shape:
        for op in self.ops:
            shape = op.shape(shape)
        return shape

    def apply(self, arr: np.ndarray) -> np.ndarray:
        for op in self.ops:
            arr = op.apply(arr)
        return arr

    @property
    def keeps_every_element(self) -> bool:
        """Only reorders: the stats of the whole tensor still hold."""
        return all(isinstance(op, _REORDERS) for op in self.ops)

    @property
    def cast(self) -> str | None:
        casts = [op.dtype for op in self.ops if isinstance(op, Cast)]
        return casts[-1] if casts else None

    def describe(self) -> str:
        return ", ".join(op.describe() for op in self.ops)

    def index_prefix(self, shape: Shape, limit: int = INDEX_MAP_LIMIT) -> np.ndarray | None:
        """The source flat index of each viewed element, in view order (None past `limit` elements)."""
        return _index_map(self, shape, limit)


@lru_cache(maxsize=256)
def _index_map(view: View, shape: Shape, limit: int) -> np.ndarray | None:
    numel = math.prod(shape)
    if numel > limit:
        return None
    index = np.arange(numel, dtype=np.int64).reshape(shape)
    for op in view.ops:
        if not isinstance(op, Cast):
            index = op.apply(index)
    out = np.ascontiguousarray(index).reshape(-1)
    out.flags.writeable = False
    return out


def parse_view(items: Sequence[tuple[str, Any]]) -> View:
    """A view from (operation, value) pairs in the order written."""
    return View(tuple(parse_op(name, value) for name, value in items))


# ---------------------------------------------------------------- records


class Viewed:
    """A record's loader with a view applied when the tensor is loaded; carries what it did, for reports."""

    def __init__(
        self, load: Callable[[], bytes | memoryview], dtype: str, shape: Shape, view: View, out_dtype: str
    ) -> None:
        self.load, self.dtype, self.source_shape, self.view, self.out_dtype = load, dtype, shape, view, out_dtype

    def array(self) -> np.ndarray:
        flat = dtypes.from_bytes(self.load(), self.dtype)
        if self.view.cast is not None and self.dtype in ("bf16", "f16"):
            flat = dtypes.widen(flat, self.dtype)  # round from the exact values, not from storage bits
        return self.view.apply(flat.reshape(self.source_shape))

    def __call__(self) -> memoryview:
        return np.ascontiguousarray(self.array(), dtype=dtypes.storage_dtype(self.out_dtype)).data.cast("B")

    def describe(self) -> str:
        return f"viewed as {self.view.describe()} of {list(self.source_shape)}"


@overload
def viewed_dtype(dtype: str, view: View) -> str: ...
@overload
def viewed_dtype(dtype: str | None, view: View) -> str | None: ...
def viewed_dtype(dtype: str | None, view: View) -> str | None:
    """The dtype a record has once viewed: the cast's (bf16 and f16 casts are held as f32 values)."""
    cast = view.cast
    if cast is None:
        return dtype
    return "f64" if cast == "f64" else "f32"


def _ragged_replace(off: np.ndarray, flat: np.ndarray, rows: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A ragged column with some rows' items replaced."""
    parts, lengths = [], np.diff(off).copy()
    start = 0
    for i in sorted(rows):
        parts += [flat[off[start] : off[i]], np.asarray(rows[i], dtype=flat.dtype)]
        lengths[i] = len(rows[i])
        start = i + 1
    parts.append(flat[off[start] :])
    new_off = np.zeros(len(off), dtype=np.int64)
    np.cumsum(lengths, out=new_off[1:])
    return new_off, np.concatenate(parts) if parts else flat


def viewed_values(values: np.ndarray, index: np.ndarray | None, cast: str | None) -> np.ndarray:
    """A record's leading values seen through a view: the longest run of viewed elements it carries."""
    if index is None:
        return values[:0]
    beyond = np.flatnonzero(index >= len(values))
    out = values[index[: beyond[0] if len(beyond) else len(index)]]
    return round_to(out, cast).astype(np.float64) if cast else out


def apply_view(
    batch: RecordBatch, rows: np.ndarray, view: View, problem: Callable[[RecordBatch, int, ViewError], None]
) -> RecordBatch:
    """The batch with `rows` viewed: shape, dtype, numel, leading values and loader become the view's.

    Stats survive views that only reorder elements; a hash is of the bytes as written, so a viewed
    record has none. A row whose shape the view cannot take is left as written and reported to `problem`.
    """
    if not len(rows):
        return batch
    shapes, values, changed = {}, {}, []
    numel, stats, counts = batch.numel.copy(), batch.stats.copy(), batch.counts.copy()
    blake3, loader, has_shape = batch.blake3.copy(), batch.loader.copy(), batch.has_shape.copy()
    assert batch.data_len is not None, "RecordBatch.__post_init__ fills it"
    data_len = batch.data_len.copy()
    dtype = batch.dtype.tolist()
    for i in rows.tolist():
        source = batch.shape_of(i)
        if source is None and batch.numel[i] >= 0:
            source = (int(batch.numel[i]),)
        try:
            if source is None:
                raise ViewError("the record has no shape to view")
            shape = view.shape(source)
        except ViewError as exc:
            problem(batch, i, exc)
            continue
        changed.append(i)
        shapes[i] = np.asarray(shape, dtype=np.int64)
        has_shape[i] = True
        numel[i] = math.prod(shape)
        values[i] = viewed_values(batch.row_values(i), view.index_prefix(source), view.cast)
        if not view.keeps_every_element or view.cast:
            stats[i], counts[i] = np.nan, NONE
        blake3[i] = b""
        out_dtype = viewed_dtype(dtype[i], view)
        stored = batch.loader_of(i)  # bytes in memory or the format's loader
        if stored is not None and dtype[i] is not None:
            loader[i] = Viewed(stored, dtype[i], source, view, out_dtype)
            data_len[i] = NONE  # the tensor is the view's now, not the bytes as stored
        dtype[i] = out_dtype
    if not changed:
        return batch
    shape_off, shape_dims = _ragged_replace(batch.shape_off, batch.shape_dims, shapes)
    val_off, flat_values = _ragged_replace(batch.val_off, batch.values, values)
    return dataclasses.replace(
        batch,
        dtype=Strings.from_values(dtype),
        numel=numel,
        has_shape=has_shape,
        shape_off=shape_off,
        shape_dims=shape_dims,
        val_off=val_off,
        values=flat_values,
        stats=stats,
        counts=counts,
        blake3=blake3,
        loader=loader,
        data_len=data_len,
    )
