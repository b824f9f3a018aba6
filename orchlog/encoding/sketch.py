"""The linear sketch of a tensor (FORMAT.md, "Sketch"): 64 numbers from which two
summaries bound ‖a − b‖₂ without the tensors.

This module is the executable form of the rule every emitter follows, bit for bit:

- Element i (C order) of n is read in its own dtype and widened exactly to f64
  (i64 rounds to nearest, as for stats); a NaN or ±Inf element counts as +0.0.
- Elements are laid out in chunks of 512 (the last one padded with +0.0):
  element i sits in chunk c = i // 512, lane q = i % 8, position p = (i // 8) % 64.
  The 64 elements of one chunk and lane form group g = 8c + q.
- Two 64-bit words per group come from SplitMix64 (seeded SEED_SIGNS):
  delta = output 2g, tau = output 2g + 1.
- Within a group: negate the element at position p when bit p of delta is set;
  apply the 64-point Walsh-Hadamard transform in place, stages h = 1, 2, 4, 8, 16,
  32, each replacing every pair (y[p], y[p + h]) with p & h == 0 by
  (y[p] + y[p + h], y[p] - y[p + h]); negate output r when bit r of tau is set.
- Chunk c picks row permutation P = ROW_TABLE[output c of stream SEED_PICK >> 54]; output r of
  each of its groups is added to accumulator row P[r] of its lane, chunk after chunk, in f64
  from +0.0. Row t of the sketch combines row LANE_ROWS[q][t] of each lane q as
  ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)), as for stats. The permutations scatter the groups'
  outputs so that no structure of the difference lines up across groups.
- Each row is rounded to the nearest f32 (ties to even); a zero is written +0.

Row r is then the sum over i of s(i, r) * x_i with signs s = ±1, so the sketch is
linear: sketch(a) − sketch(b) ≈ sketch(a − b), up to rounding. Each row's square
has expectation ‖x‖²; the mean of the 64 squares is the estimate (ESTIMATE_BAND
gives its error). See docs/compare.md, "The sketch", for the measurements.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from orchlog.encoding import dtypes

ROWS = 64
LANES = 8
CHUNK = ROWS * LANES
TABLE = 1024  # row permutations a chunk picks from
GOLDEN = 0x9E3779B97F4A7C15
# Consecutive 64-bit words of pi's hex digits: constants no one chose, one per stream.
SEED_SIGNS = 0x243F6A8885A308D3
SEED_PICK = 0x13198A2E03707344
SEED_TABLE = 0xA4093822299F31D0
SEED_LANES = 0x082EFA98EC4E6C89
_STAGES = (1, 2, 4, 8, 16, 32)


def splitmix64(seed: int, j: np.ndarray) -> np.ndarray:
    """Output j of SplitMix64 seeded with `seed`: mix(seed + (j + 1) * GOLDEN), for an array of j."""
    z = np.asarray(j, dtype=np.uint64) + np.uint64(1)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + z * np.uint64(GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed


def permutations(seed: int, count: int) -> np.ndarray:
    """[count, 64] Fisher-Yates shuffles of 0..63: permutation m swaps, for k = 0..62 and i = 63 - k,
    entry i with entry j = (w * (i + 1)) >> 32, where w is the low (k even) or high (k odd) half of
    output 32m + k // 2 of the stream."""
    out = splitmix64(seed, np.arange(count * 32, dtype=np.uint64)).reshape(count, 32)
    perm = np.tile(np.arange(ROWS, dtype=np.int64), (count, 1))
    rows = np.arange(count)
    for k in range(ROWS - 1):
        i = ROWS - 1 - k
        w = (out[:, k // 2] >> np.uint64(32 * (k % 2))) & np.uint64(0xFFFFFFFF)
        j = ((w * np.uint64(i + 1)) >> np.uint64(32)).astype(np.int64)
        perm[rows, i], perm[rows, j] = perm[rows, j], perm[rows, i]
    return perm


@functools.cache
def row_table() -> np.ndarray:
    """The TABLE row permutations a chunk picks from (ROW_TABLE)."""
    return permutations(SEED_TABLE, TABLE)


@functools.cache
def lane_rows() -> np.ndarray:
    """Each lane's order of rows in the sketch (LANE_ROWS)."""
    return permutations(SEED_LANES, LANES)


def _bits(words: np.ndarray) -> np.ndarray:
    """[..., 64] booleans: bit k of each word."""
    bits: np.ndarray = ((words[..., None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    return bits


def sketch_f64(x: np.ndarray) -> np.ndarray:
    """The 64 rows in f64, before rounding to f32, of the f64 values x (along its last axis; leading
    axes are a batch, which the estimator's measurements use)."""
    x = np.where(np.isfinite(x), x, 0.0)
    batch, n = x.shape[:-1], x.shape[-1]
    chunks = -(-n // CHUNK)
    padded = np.zeros((*batch, chunks * CHUNK))
    padded[..., :n] = x
    y = padded.reshape(*batch, chunks, ROWS, LANES)  # [..., c, p, q]
    c = np.arange(chunks, dtype=np.uint64)
    groups = c[:, None] * np.uint64(LANES) + np.arange(LANES, dtype=np.uint64)
    delta = _bits(splitmix64(SEED_SIGNS, 2 * groups)).transpose(0, 2, 1)  # [c, p, q]
    tau = _bits(splitmix64(SEED_SIGNS, 2 * groups + np.uint64(1))).transpose(0, 2, 1)  # [c, r, q]
    y = np.where(delta, -y, y)
    for h in _STAGES:
        y = y.reshape(*batch, chunks, ROWS // (2 * h), 2, h, LANES)
        first, second = y[..., 0, :, :], y[..., 1, :, :]
        y = np.stack((first + second, first - second), axis=-3)
    y = y.reshape(*batch, chunks, ROWS, LANES)
    y = np.where(tau, -y, y)
    # Output r of chunk c goes to accumulator row pick[c][r] of its lane.
    pick = row_table()[(splitmix64(SEED_PICK, c) >> np.uint64(54)).astype(np.int64)]  # [c, r]
    placed = np.zeros_like(y)
    np.put_along_axis(placed, np.broadcast_to(pick[..., None], y.shape), y, axis=-2)
    # Each lane's accumulator row sums its chunks in order (cumsum is sequential), from +0.0.
    start = np.zeros((*batch, 1, ROWS, LANES))
    acc = np.cumsum(np.concatenate((start, placed), axis=-3), axis=-3)[..., -1, :, :]  # [..., row, q]
    # Row t of the sketch takes row lane_rows()[q][t] of lane q.
    order = lane_rows()
    l = [acc[..., order[q], q] for q in range(LANES)]  # noqa: E741
    sketch: np.ndarray = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
    return sketch


def compute(data: bytes, dtype: str) -> list[float]:
    """The sketch of a tensor given its raw bytes and schema dtype: 64 f32 values (as Python floats)."""
    with np.errstate(invalid="ignore", over="ignore"):
        x = dtypes.to_f64(dtypes.from_bytes(data, dtype), dtype)
        rows = sketch_f64(x).astype(np.float32)
    return [0.0 if v == 0 else float(v) for v in rows]


# ---------------------------------------------------------------- the estimator

# D² = mean over rows of (sketch(a) − sketch(b))² estimates ‖a − b‖². Modelled as
# ‖a − b‖² · χ²₆₄ / 64 (exact for Gaussian signs; ±1 signs and the exact
# within-group transform measure as tight or tighter: docs/compare.md). With
# probability ≥ 1 − 1e-6 the ratio D² / ‖a − b‖² lies in ESTIMATE_BAND, so
# ‖a − b‖ lies in [D / sqrt(hi), D / sqrt(lo)]: `chi2_quantile` computes both.
FAILURE_PROBABILITY = 1e-6


def chi2_sf(x: float, k: int = ROWS) -> float:
    """P(χ²_k > x) for even k: e^(−x/2) Σ_{j<k/2} (x/2)^j / j! (the Poisson sum), exact to rounding."""
    if x <= 0:
        return 1.0
    half, term, total = x / 2, 1.0, 1.0
    for j in range(1, k // 2):
        term *= half / j
        total += term
    return math.exp(-half) * total


def chi2_cdf(x: float, k: int = ROWS) -> float:
    """P(χ²_k ≤ x) for even k (precise in the lower tail, where the survival function is near 1)."""
    return 1.0 - chi2_sf(x, k)


def chi2_quantile(p: float, k: int = ROWS) -> float:
    """x with P(χ²_k ≤ x) = p, by bisection (lower tail via the cdf, upper via the survival function)."""
    lo, hi = 0.0, 10.0 * k + 200.0
    for _ in range(200):
        mid = (lo + hi) / 2
        below = chi2_cdf(mid, k) < p if p < 0.5 else chi2_sf(mid, k) > 1 - p
        lo, hi = (mid, hi) if below else (lo, mid)
    return (lo + hi) / 2


@functools.cache
def estimate_band() -> tuple[float, float]:
    """The interval D² / ‖a − b‖² lies in with probability ≥ 1 − FAILURE_PROBABILITY (ESTIMATE_BAND)."""
    return (
        chi2_quantile(FAILURE_PROBABILITY / 2) / ROWS,
        chi2_quantile(1 - FAILURE_PROBABILITY / 2) / ROWS,
    )


# The tables and the band are computed on first use: bisecting the band and shuffling the tables cost
# several milliseconds at every start of every command that imports this module, most of which never
# sketch a tensor.
_LAZY = {"ROW_TABLE": row_table, "LANE_ROWS": lane_rows, "ESTIMATE_BAND": estimate_band}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return _LAZY[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
