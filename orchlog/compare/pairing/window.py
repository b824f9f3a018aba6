"""Windows: the region two tensors of the same rank but different extents are compared on.

llama.cpp's attention rows span its KV cache padded to 256 cells, `[n_head,
256]`, where another engine's span the positions so far, `[n_head, 7]`. The
numbers that mean the same thing sit in the common leading window along every
axis, `[n_head, 7]`: the first 7 cells of every head. A flat common prefix
would instead compare all of head 0's cells with the first heads' few.

With `--window GLOB` (or `window = true` in a tolerance rule or a name-map
target) such a pair is compared on its window and graded like any other;
without, it is still compared on its window but fails (shapes differ).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from orchlog.records import record

Shape = tuple[int, ...]


def _text(shape: Shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


@record(frozen=True)
class Window:
    shape_a: Shape
    shape_b: Shape
    extent: Shape  # the common leading window
    allowed: bool  # asked for: graded normally; else the pair fails

    @staticmethod
    def of(shape_a: Shape | None, shape_b: Shape | None, allowed: bool) -> Window | None:
        """The window of two shapes of the same rank with different extents; None for any other pair."""
        if shape_a is None or shape_b is None or len(shape_a) != len(shape_b) or shape_a == shape_b or not shape_a:
            return None
        return Window(shape_a, shape_b, tuple(min(x, y) for x, y in zip(shape_a, shape_b)), allowed)

    @property
    def numel(self) -> int:
        return math.prod(self.extent)

    def describe(self) -> str:
        return f"compared on window {_text(self.extent)} of {_text(self.shape_a)} / {_text(self.shape_b)}"

    def to_json(self) -> dict[str, Any]:
        return {"window": list(self.extent), "a": list(self.shape_a), "b": list(self.shape_b), "allowed": self.allowed}

    def region(self) -> tuple[slice, ...]:
        return tuple(slice(0, d) for d in self.extent)

    def cut(self, flat: np.ndarray, side: str) -> np.ndarray:
        """A side's whole tensor (flat) cut to the window, as a view where NumPy allows."""
        shape = self.shape_a if side == "a" else self.shape_b
        return flat.reshape(shape)[self.region()]

    def leading(self, values_a: np.ndarray, values_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The window's elements that both sides' leading values hold, in window order.

        In row-major order the window's k-th element sits at a flat index >= k of
        either tensor, so the ones a side's first n values hold are among the
        window's first n elements, and they come first.
        """
        m = min(len(values_a), len(values_b), self.numel)
        if m == 0:
            return values_a[:0], values_b[:0]
        index = np.unravel_index(np.arange(m), self.extent)
        flat_a = np.ravel_multi_index(index, self.shape_a)
        flat_b = np.ravel_multi_index(index, self.shape_b)
        held = (flat_a < len(values_a)) & (flat_b < len(values_b))
        k = int(np.argmin(held)) if not held.all() else m
        return values_a[flat_a[:k]], values_b[flat_b[:k]]
