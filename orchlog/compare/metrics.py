"""Metrics for every pair a round of alignment found, as columns, with the interval each is proven in.

Each pair is measured on the best basis both sides allow:
  tensor   both whole tensors are at hand (bytes, or every value inline): exact metrics
  hash     both carry the same blake3 over the same dtype and size: equal, no data read; or the
           hashes differ where the format (legacy trace records) or --exact says that alone decides
  sketch   both carry a sketch: bounds from it, the stats and the leading values (orchlog/compare/bounds.py)
  bounds   otherwise: bounds from the leading values both sides carry and the whole-tensor stats
  leading  a legacy checkpoint JSONL side: the leading values both sides carry, graded as that
           format's own spec does (orchlog/compare/semantics.py)
`lo` and `hi` hold, per metric, the interval the evidence proves (lo == hi when
measured exactly); grading passes a pair only when the interval is within
tolerance. For sketch and bounds pairs `m` holds the proven side of each
interval (lo; hi for cosine and top1_match), so that `max_abs` reads "at
least", and rms_a, rms_b and the ranges come from the whole-tensor stats.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from orchlog import kernels
from orchlog.compare import bounds
from orchlog.compare.logits import agreement, rank_of
from orchlog.compare.semantics import Semantics
from orchlog.compare.tensor_metrics import TensorDiff, tensor_diff
from orchlog.compare.tensors import flat_tensor
from orchlog.read.batch import RecordBatch

DIFF_COLUMNS = tuple(f.name for f in dataclasses.fields(TensorDiff))
LOGITS_COLUMNS = ("top1_a", "top1_b", "top1_match", "kl", "rank_a", "rank_b")
COLUMNS = DIFF_COLUMNS + LOGITS_COLUMNS
BASES = ("tensor", "hash", "sketch", "bounds", "leading")
TENSOR, HASH, SKETCH, BOUNDS, LEADING = range(5)
HIGHER_IS_BETTER = ("cosine", "top1_match")


@dataclasses.dataclass
class PairTable:
    """The pairs of one round (rows ia of a, ib of b) and their metrics, one entry per pair."""

    a: RecordBatch
    b: RecordBatch
    ia: np.ndarray
    ib: np.ndarray
    m: dict[str, np.ndarray]  # COLUMNS -> float64, NaN where not measured
    basis: np.ndarray  # int8 index into BASES
    hash_state: np.ndarray  # int8: 1 equal, 0 different, -1 not known
    dtype_mismatch: np.ndarray
    shape_mismatch: np.ndarray
    numel_mismatch: np.ndarray
    is_logits: np.ndarray
    lo: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)  # bounds.BOUNDED -> proven lower end
    hi: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)  # ... and upper end
    semantics: Semantics = Semantics()

    def __len__(self) -> int:
        return len(self.ia)


def _shape_mismatch(a: RecordBatch, b: RecordBatch, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    len_a, len_b = np.diff(a.shape_off)[ia], np.diff(b.shape_off)[ib]
    known = a.has_shape[ia] & b.has_shape[ib]
    same_len = known & (len_a == len_b)
    differs = known & ~same_len
    rows = np.flatnonzero(same_len & (len_a > 0))
    if len(rows):
        starts_a, starts_b = a.shape_off[ia[rows]], b.shape_off[ib[rows]]
        lengths = len_a[rows]
        steps = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        neq = a.shape_dims[np.repeat(starts_a, lengths) + steps] != b.shape_dims[np.repeat(starts_b, lengths) + steps]
        per_pair = np.add.reduceat(neq.astype(np.int64), np.cumsum(lengths) - lengths)
        differs[rows] = per_pair > 0
    return differs


def _nan_columns(n: int) -> dict[str, np.ndarray]:
    return {c: np.full(n, np.nan) for c in COLUMNS}


def _diff_row(d: TensorDiff) -> dict[str, float]:
    return {c: float(getattr(d, c)) for c in DIFF_COLUMNS}


def _partial(t: PairTable, rows: np.ndarray) -> None:
    """Pairs without both tensors and without equal hashes: leading values, stats, sketches."""
    a, b, ia, ib = t.a, t.b, t.ia[rows], t.ib[rows]
    block = kernels.prefix_diffs(a.values, a.val_off, ia, b.values, b.val_off, ib)
    prefix = {c: block[:, k] for k, c in enumerate(kernels.PREFIX_COLUMNS)}
    if t.semantics.leading_rule:
        # The legacy checkpoint format's own rule: the leading values are the figures graded.
        t.basis[rows] = LEADING
        for c in kernels.PREFIX_COLUMNS:
            t.m[c][rows] = prefix[c]
        _set_interval(t, rows, bounds.exact(prefix, len(rows)))
        return
    sa, sb = a.stats[ia], b.stats[ib]
    for side, stats in (("a", sa), ("b", sb)):
        for col, k in (("rms", 3), ("min", 0), ("max", 1)):
            t.m[f"{col}_{side}"][rows] = stats[:, k]
    t.m["n"][rows] = prefix["n"]
    t.m["nonfinite_mismatch"][rows] = prefix["nonfinite_mismatch"]
    comparable = (
        (a.counts[ia] == 0).all(axis=1)
        & (b.counts[ib] == 0).all(axis=1)
        & (a.numel[ia] >= 0)
        & (a.numel[ia] == b.numel[ib])
    )
    proven = bounds.partial(prefix, sa, sb, comparable, a.numel[ia], bounds.sketches(a, ia), bounds.sketches(b, ib))
    _set_interval(t, rows, proven)
    for c in bounds.BOUNDED:
        lo, hi = proven.lo[c], proven.hi[c]
        # The proven side, where anything is proven on it (or the figure itself, when known exactly).
        proven_side = hi if c in HIGHER_IS_BETTER else lo
        nothing = proven_side == (bounds.UNKNOWN[c][1] if c in HIGHER_IS_BETTER else bounds.UNKNOWN[c][0])
        t.m[c][rows] = np.where(nothing & (lo != hi), np.nan, proven_side)
    decided_by_hash = t.semantics.hash_decides & (t.hash_state[rows] == 0)
    t.basis[rows] = np.where(decided_by_hash, HASH, np.where(proven.sketched, SKETCH, BOUNDS))


def _set_interval(t: PairTable, rows: np.ndarray, interval: bounds.Interval) -> None:
    for c in bounds.BOUNDED:
        t.lo[c][rows] = interval.lo[c]
        t.hi[c][rows] = interval.hi[c]


def _settled(t: PairTable, rows: np.ndarray, track_token: int | None) -> None:
    a, ia = t.a, t.ia[rows]
    stats = a.stats[ia]
    zeros = np.zeros(len(rows))
    for c in ("max_abs", "mean_abs", "max_rel", "p99_abs", "rms_diff", "l2", "nonfinite_mismatch"):
        t.m[c][rows] = zeros
    t.m["cosine"][rows] = 1.0
    t.m["n"][rows] = a.numel[ia]
    for side in "ab":
        for col, k in (("rms", 3), ("min", 0), ("max", 1)):
            t.m[f"{col}_{side}"][rows] = stats[:, k]
    logits = rows[t.is_logits[rows]]
    t.m["top1_match"][logits] = 1.0
    t.m["kl"][logits] = 0.0
    if track_token is None:
        return
    # Equal logits rank the tracked token equally; read one side only to say where.
    for r in logits:
        values = flat_tensor(a, int(t.ia[r]))
        if values is not None and 0 <= track_token < values.size:
            t.m["rank_a"][r] = t.m["rank_b"][r] = rank_of(values, track_token)


def _tensor_pair(t: PairTable, r: int, track_token: int | None) -> None:
    i, j = t.ia[r], t.ib[r]
    ta, tb = flat_tensor(t.a, i), flat_tensor(t.b, j)
    for c, v in _diff_row(tensor_diff(ta, tb)).items():
        t.m[c][r] = v
    if t.is_logits[r]:
        n = min(ta.size, tb.size)
        g = agreement(ta[:n], tb[:n], track_token)
        for c in ("top1_a", "top1_b", "kl", "rank_a", "rank_b"):
            value = getattr(g, c)
            t.m[c][r] = math.nan if value is None else value
        t.m["top1_match"][r] = float(g.top1_a == g.top1_b)


def measure(
    a: RecordBatch,
    b: RecordBatch,
    ia: np.ndarray,
    ib: np.ndarray,
    is_logits: Callable[[str | None], bool],
    track_token: int | None = None,
    semantics: Semantics = Semantics(),
) -> PairTable:
    """Metrics for the pairs (ia[p], ib[p]) of two batches."""
    n = len(ia)
    dtype_a, dtype_b = a.dtype[ia].values(), b.dtype[ib].values()
    numel_a, numel_b = a.numel[ia], b.numel[ib]
    numel_mismatch = (numel_a >= 0) & (numel_b >= 0) & (numel_a != numel_b)
    ha, hb = a.blake3[ia], b.blake3[ib]
    known = (ha != b"") & (hb != b"")
    hash_state = np.where(known, (ha == hb).astype(np.int8), np.int8(-1)).astype(np.int8)
    dtype_mismatch = (dtype_a != dtype_b) & (dtype_a != None) & (dtype_b != None)  # noqa: E711 - elementwise
    t = PairTable(
        a,
        b,
        ia,
        ib,
        _nan_columns(n),
        np.full(n, BOUNDS, dtype=np.int8),
        hash_state,
        dtype_mismatch,
        _shape_mismatch(a, b, ia, ib),
        numel_mismatch,
        a.checkpoint[ia].per_row(is_logits, dtype=bool),
        semantics=semantics,
    )
    settled = (hash_state == 1) & ~dtype_mismatch & ~numel_mismatch
    full = ~settled & a.has_data()[ia] & b.has_data()[ib]
    t.basis[settled], t.basis[full] = HASH, TENSOR
    if settled.any():
        _settled(t, np.flatnonzero(settled), track_token)
    for r in np.flatnonzero(full):
        _tensor_pair(t, int(r), track_token)
    exact = np.flatnonzero(settled | full)
    # Nothing is proven until a basis says so: a pair no path below fills stays undecided, never passes.
    unknown = bounds.unknown(n)
    t.lo, t.hi = unknown.lo, unknown.hi
    if len(exact):
        _set_interval(t, exact, bounds.exact({c: t.m[c][exact] for c in bounds.BOUNDED}, len(exact)))
    partial = np.flatnonzero(~settled & ~full)
    if len(partial):
        _partial(t, partial)
    return t
