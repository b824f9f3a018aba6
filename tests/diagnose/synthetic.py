"""Synthetic cases for the signature tests: a reference over a few tokens, and ours made from it."""

from __future__ import annotations

import numpy as np

from orchlog.diagnose.case import Case, Pair, Reference, Side, Where
from orchlog.encoding.sketch import sketch_f64

RNG_SEED = 1234


def f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def noisy(x: np.ndarray, seed: int = 0) -> np.ndarray:
    """float32 rounding noise of a correct engine (exact zeros stay zero)."""
    rng = np.random.default_rng(seed)
    rms = float(np.sqrt(np.mean(np.square(x)))) or 1.0
    out = x * (1 + 3e-7 * rng.standard_normal(x.shape)) + 1e-7 * rms * rng.standard_normal(x.shape)
    return f32(np.where(x == 0, 0.0, out))


def reference(tokens: int = 6, n: int = 64, seed: int = RNG_SEED) -> np.ndarray:
    return f32(np.random.default_rng(seed).standard_normal((tokens, n)))


def case_of(
    ref: np.ndarray,
    ours: np.ndarray,
    shape: tuple[int, ...] | None = None,
    at: int = 0,
    checkpoint: str = "x",
    summary: int | None = None,
    sketch: bool = False,
    **kw,
) -> Case:
    """A case over tokens 0..T-1 (rows), diverging at token `at`; `summary=k` keeps k leading values and stats
    (`sketch=True`: and the record's sketch, as emitters write it)."""

    def side(row: np.ndarray) -> Side:
        if summary is None:
            return Side.of(row.reshape(shape) if shape else row)
        stats = {
            "min": float(row.min()),
            "max": float(row.max()),
            "mean": float(row.mean()),
            "rms": float(np.sqrt(np.mean(np.square(row)))),
            "nan_count": int(np.isnan(row).sum()),
            "inf_count": int(np.isinf(row).sum()),
        }
        rows = np.asarray(sketch_f64(row.astype(np.float32).astype(np.float64)), dtype=np.float32) if sketch else None
        return Side.summary(
            row[:summary], row.size, shape, stats, sketch=None if rows is None else rows.astype(np.float64)
        )

    pairs = [Pair(Where(checkpoint, 0, None, t), side(r), side(o)) for t, (r, o) in enumerate(zip(ref, ours))]
    pool = kw.pop("pool", None)
    if pool is None:
        pool = [Reference(p.where, p.ref, "other_token") for t, p in enumerate(pairs) if t != at]
    return Case(pairs[at], tokens=pairs, pool=pool, **kw)
