"""Canonical whole-tensor statistics (FORMAT.md, "Stats").

Every emitter must print the same digits, so the summation order is part of
the format: element i goes to lane i % 8, each lane sums in element order in
f64 starting from +0.0 (squares are rounded products, never fused), and the
lanes are combined as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). Eight lanes map
onto two AVX2 or one AVX-512 register of doubles, so fast emitters can
vectorise without changing a bit of the result.
"""

from __future__ import annotations

import numpy as np

from orchlog import schema_gen
from orchlog.encoding import dtypes
from orchlog.schema_gen import Stats

LANES = schema_gen.STATS_LANES


def _tree(lanes: list[float]) -> float:
    level = list(lanes)
    while len(level) > 1:
        level = [level[i] + level[i + 1] for i in range(0, len(level), 2)]
    return level[0]


def _lane_sum(x: np.ndarray) -> float:
    """Sequential f64 sum of one lane, starting from +0.0 (cumsum is sequential)."""
    if x.size == 0:
        return 0.0
    return float(np.cumsum(np.concatenate(([0.0], x)))[-1])


def _plus_zero(v: float) -> float:
    # The sign of a zero result depends on evaluation order; the format drops it.
    return 0.0 if v == 0 else v


def compute(data: bytes | memoryview, dtype: str) -> Stats:
    """Stats of a tensor given its raw bytes and schema dtype."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _compute(data, dtype)


def _compute(data: bytes | memoryview, dtype: str) -> Stats:
    # Squares of huge f64 values overflow to inf by definition; casting a
    # signalling NaN raises "invalid": neither is an error here.
    x = dtypes.to_f64(dtypes.from_bytes(data, dtype), dtype)
    nan = np.isnan(x)
    inf = np.isinf(x)
    finite = ~(nan | inf)
    n_finite = int(finite.sum())
    if n_finite == 0:
        return Stats(None, None, None, None, None, int(nan.sum()), int(inf.sum()))
    masked = np.where(finite, x, 0.0)
    squares = masked * masked
    sums, sq_sums = [], []
    for lane in range(LANES):
        sel = finite[lane::LANES]
        sums.append(_lane_sum(masked[lane::LANES][sel]))
        sq_sums.append(_lane_sum(squares[lane::LANES][sel]))
    total, total_sq = _tree(sums), _tree(sq_sums)
    fx = x[finite]
    return Stats(
        min=_plus_zero(float(fx.min())),
        max=_plus_zero(float(fx.max())),
        mean=_plus_zero(total / n_finite),
        rms=_plus_zero(float(np.sqrt(np.float64(total_sq / n_finite)))),
        abs_max=_plus_zero(float(np.abs(fx).max())),
        nan_count=int(nan.sum()),
        inf_count=int(inf.sum()),
    )
