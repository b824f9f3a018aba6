"""Accumulation or a jump: the diverging checkpoint's error at every layer of its token (seed 003's
"accumulation vs bug").

A jump: the relative error is 100 times what it was one layer before, or the layer before was at float32
noise (below 1e-5) and this one is ten times that. Accumulation: from the first layer on, the error is
above noise and rises to the diverging layer, each layer multiplying it by 0.5 to 30.
"""

from __future__ import annotations

import math
from typing import Any

from orchlog.diagnose.locality import PairError
from orchlog.records import record

NOISE = 1e-5  # relative error of float32 rounding after a few ops
JUMP = 100.0
STEADY = 30.0
SHRINK = 2.0  # a layer may halve the error and still be part of a steady rise


@record(frozen=True)
class LayerGrowth:
    verdict: str  # "jump", "accumulation" or "unclear"
    errors: list[tuple[int, PairError]]  # (layer, error), every layer of the token
    factor: float | None  # the diverging layer's relative error over the one before
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "factor": self.factor,
            "layers": [{"layer": layer, "max_abs": e.max_abs, "relative": e.relative} for layer, e in self.errors],
            "message": self.message,
        }


def layer_growth(errors: list[tuple[int, PairError]], layer: int | None) -> LayerGrowth | None:
    """From (layer, error) of the checkpoint at every layer of the token; None when the checkpoint has no
    layer, or no layer before the diverging one to compare with."""
    if layer is None or len(errors) < 2:
        return None
    upto = [(lay, e.relative) for lay, e in errors if lay <= layer and not math.isnan(e.relative)]
    if not upto or upto[-1][0] != layer:
        return None
    here = upto[-1][1]
    if len(upto) < 2:
        return None  # the first layer where it is compared: nothing before it to grow from
    prev_layer, prev = upto[-2]
    factor = here / prev if prev > 0 else math.inf
    if factor >= JUMP or (prev < NOISE and here >= 10 * max(prev, NOISE)):
        times = "from exact agreement" if math.isinf(factor) else f"x{factor:.3g}"
        msg = (
            f"the relative error jumps from {prev:.2g} at layer {prev_layer} to {here:.2g} at layer {layer} "
            f"({times}): something at this layer, not accumulation"
        )
        return LayerGrowth("jump", errors, factor, msg)
    first_layer, first = upto[0]
    steps = [b / a if a > 0 else math.inf for (_, a), (_, b) in zip(upto, upto[1:])]
    if first >= NOISE and here > first and all(1 / SHRINK <= s <= STEADY for s in steps):
        per_layer = (here / first) ** (1 / max(layer - first_layer, 1)) if first > 0 else math.inf
        msg = (
            f"the relative error grows from {first:.2g} at layer {first_layer} to {here:.2g} at layer {layer} "
            f"(x{per_layer:.3g} per layer): accumulation (precision, quantization), not one bug"
        )
        return LayerGrowth("accumulation", errors, factor, msg)
    msg = f"relative error {prev:.2g} at layer {prev_layer}, {here:.2g} at layer {layer} (x{factor:.3g})"
    return LayerGrowth("unclear", errors, factor, msg)
