"""What was done to a pair to line its two tensors up, for the report: views, windows, gathered shards.

The comparer measures two aligned arrays and nothing else; this module makes
them (`pair_arrays`) and keeps the story of how (`Alignment`): each side's
view, derivation or gathering as its loader tells it, the window, and for a
tensor gathered from shards along an axis, each rank's own error, so that
a report can say which rank's shard carries it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from orchlog.compare.measuring.tensor_metrics import TensorDiff, tensor_diff
from orchlog.compare.pairing.window import Window
from orchlog.maps.shards import Gathered
from orchlog.records import record

SHARD_METRICS = ("max_abs", "mean_abs", "max_rel", "rms_diff", "l2", "cosine", "rel_l2")


def how_loaded(loader: Any) -> str | None:
    """What a record's loader does beyond reading bytes (a view, a derivation, a gathering), if anything."""
    describe = getattr(loader, "describe", None)
    return describe() if callable(describe) else None


@record(frozen=True)
class ShardErrors:
    """Each rank's share of the difference, for a side gathered from shards along `axis`."""

    side: str
    axis: int
    ranks: tuple[int, ...]
    diffs: tuple[TensorDiff, ...]

    def values(self, metric: str) -> list[float]:
        return [float(getattr(d, metric, np.nan)) for d in self.diffs]

    def failing(self, metric: str, threshold: float, higher_is_better: bool, cos_tol: float | None) -> list[int]:
        """The ranks whose own piece fails the pair's rule (an unmeasured metric counts as not failing)."""
        out = []
        for rank, d in zip(self.ranks, self.diffs):
            value = getattr(d, metric, np.nan)
            bad = value < threshold if higher_is_better else value >= threshold
            if cos_tol is not None and d.cosine < cos_tol:
                bad = True
            if bad or d.nonfinite_mismatch:
                out.append(rank)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "side": self.side,
            "axis": self.axis,
            "ranks": list(self.ranks),
            **{m: self.values(m) for m in SHARD_METRICS},
        }


@record(frozen=True)
class Alignment:
    window: Window | None = None
    how: tuple[str | None, str | None] = (None, None)  # each side's view / derivation / gathering
    shards: ShardErrors | None = None

    def __bool__(self) -> bool:
        return bool(self.window or any(self.how) or self.shards)

    def lines(self) -> list[str]:
        out = [f"{side}: {text}" for side, text in zip("ab", self.how) if text]
        if self.window is not None:
            out.append(
                self.window.describe() + ("" if self.window.allowed else " (not allowed, so it fails: --window)")
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "window": None if self.window is None else self.window.to_json(),
            "how": dict(zip("ab", self.how)),
            "shards": None if self.shards is None else self.shards.to_json(),
        }


def _shaped(flat: np.ndarray, shape: tuple[int, ...] | None) -> np.ndarray:
    return flat.reshape(shape) if shape is not None and flat.size == int(np.prod(shape)) else flat


def shard_errors(side: str, gathered: Gathered, xa: np.ndarray, xb: np.ndarray) -> ShardErrors | None:
    """Each rank's piece of two shaped, aligned arrays measured on its own."""
    axis = gathered.axis
    if axis is None or xa.ndim <= axis or xa.shape != xb.shape:
        return None
    ranks, diffs = [], []
    for rank, start, stop in gathered.extents():
        stop = min(stop, xa.shape[axis])
        if start >= stop:
            continue
        region = tuple(slice(start, stop) if k == axis else slice(None) for k in range(xa.ndim))
        ranks.append(rank)
        diffs.append(tensor_diff(xa[region], xb[region], p99=False))
    return ShardErrors(side, axis, tuple(ranks), tuple(diffs)) if ranks else None


def pair_arrays(
    ta: np.ndarray,
    tb: np.ndarray,
    shapes: tuple[tuple[int, ...] | None, tuple[int, ...] | None],
    window: Window | None,
    loaders: tuple[Any, Any],
) -> tuple[np.ndarray, np.ndarray, Alignment]:
    """The two whole tensors (flat) as the comparer measures them, and how they were lined up."""
    how = (how_loaded(loaders[0]), how_loaded(loaders[1]))
    if window is not None:
        xa, xb = window.cut(ta, "a"), window.cut(tb, "b")
    else:
        xa, xb = _shaped(ta, shapes[0]), _shaped(tb, shapes[1])
    shards = None
    for side, loader in zip("ab", loaders):
        if isinstance(loader, Gathered) and loader.axis is not None and xa.shape == xb.shape:
            shards = shard_errors(side, loader, xa, xb)
            break
    return xa.reshape(-1), xb.reshape(-1), Alignment(window, how, shards)
