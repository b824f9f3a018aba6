"""Where inside the first divergence's tensor the error lies: a histogram of |a - b| and the error by index.

Drawn only from whole tensors on both sides (summaries' leading values say
too little to plot). The histogram's bins are logarithmic, since errors span
orders of magnitude; exact zeros and non-finite differences are counted
apart. The error by index is the worst |a - b| per bin of flat indices; for
attention tensors it is also drawn per head, as (head, index within the
head), which is where a RoPE mistake shows its frequency pattern: the error
grows along the head dimension in steps of two (the rotated pairs). A tensor
counts as attention when its name says so (q, k, v, attn, rope, kq, ...) and
it has at least two axes with a last axis of at most 256 values: the last
axis is taken as the head dimension and the one before as the heads.
"""

from __future__ import annotations

import re

import numpy as np

from orchlog.compare.dump import tensor_for_dump
from orchlog.compare.pairview import PairView
from orchlog.records import record

HIST_BINS = 40
INDEX_BINS = 512
MAX_HEADS, MAX_HEAD_DIM = 64, 256
_ATTENTION = re.compile(r"(?i)(^|[^a-z])(q|k|v|qk|kq|qkv|qcur|kcur|vcur|query|key|value|attn|attention|rope)([^a-z]|$)")


@record
class ErrorShape:
    numel: int
    zeros: int  # |a - b| == 0 exactly
    nonfinite: int  # NaN or Inf in the difference
    hist_edges: list[float]  # log-spaced, len(hist_counts) + 1
    hist_counts: list[int]
    index_max: list[float]  # worst |a - b| per bin of flat indices
    index_group: int  # flat indices per bin
    heads: list[list[float]] | None = None  # (head, index within head): worst |a - b| over the other axes
    head_axis: tuple[int, int] | None = None  # (heads, head_dim) as read from the shape


def is_attention(name: str, shape: tuple[int, ...] | None) -> bool:
    return bool(
        shape and len(shape) >= 2 and 1 < shape[-1] <= MAX_HEAD_DIM and shape[-2] > 1 and _ATTENTION.search(name)
    )


def error_shape(view: PairView) -> tuple[ErrorShape | None, str]:
    """The error's distribution in the pair's tensors, or None and why it cannot be drawn."""
    if view.records is None:
        return None, "the pair's records were not kept (a report merged from parts does not carry them)"
    if view.alignment:  # a view, window, derivation or gathering: the records as written are not what was compared
        return (
            None,
            "the pair was lined up from the tensors as written (see its alignment); their raw elements are not the ones compared",
        )
    (a, whole_a), (b, whole_b) = (tensor_for_dump(r) for r in view.records)
    if not (whole_a and whole_b):
        return None, "the traces hold only leading values for this pair; log it in full mode to see its error"
    if a.size != b.size:
        return None, f"the tensors differ in size ({a.size} vs {b.size})"
    if a.size == 0:
        return None, "the tensors are empty"
    shape = tuple(a.shape) if a.shape == b.shape else None
    with np.errstate(all="ignore"):
        diff = np.abs(a.astype(np.float64).ravel() - b.astype(np.float64).ravel())
    return of_difference(diff, shape, view.checkpoint), ""


def of_difference(diff: np.ndarray, shape: tuple[int, ...] | None, name: str) -> ErrorShape:
    finite = np.isfinite(diff)
    positive = diff[finite & (diff > 0)]
    if len(positive):
        lo, hi = np.log10(positive.min()), np.log10(positive.max())
        edges = np.logspace(lo, hi if hi > lo else lo + 1, HIST_BINS + 1)
        counts, _ = np.histogram(positive, bins=edges)
    else:
        edges, counts = np.array([]), np.array([], dtype=np.int64)
    shown = np.where(finite, diff, np.inf)
    group = max(1, -(-diff.size // INDEX_BINS))
    padded = np.full(-(-diff.size // group) * group, -np.inf)
    padded[: diff.size] = shown
    index_max = padded.reshape(-1, group).max(axis=1)
    heads = head_axis = None
    if shape is not None and is_attention(name, shape):
        n_heads, head_dim = shape[-2], shape[-1]
        grid = shown.reshape(-1, n_heads, head_dim).max(axis=0)
        step = max(1, -(-n_heads // MAX_HEADS))
        if step > 1:  # many heads: neighbouring heads share a row, showing their worst
            pad = np.full((-(-n_heads // step) * step, head_dim), -np.inf)
            pad[:n_heads] = grid
            grid = pad.reshape(-1, step, head_dim).max(axis=1)
        heads, head_axis = grid.tolist(), (n_heads, head_dim)
    return ErrorShape(
        int(diff.size),
        int(np.count_nonzero(diff == 0)),
        int(diff.size - np.count_nonzero(finite)),
        edges.tolist(),
        counts.tolist(),
        index_max.tolist(),
        group,
        heads,
        head_axis,
    )
