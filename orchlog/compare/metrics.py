"""Metrics for every pair a round of alignment found, as columns.

Each pair is measured on the best basis both sides allow:
  tensor   both whole tensors are at hand (bytes, or every value inline): exact metrics
  hash     both carry the same blake3 over the same dtype and size: equal, no data read
  summary  otherwise: the leading values both sides carry, plus whole-tensor stats.
           max_abs is then a lower bound: the larger of the leading values' max
           difference and the stats differences (|Δmin|, |Δmax|, |Δmean|, |Δrms|,
           |Δabs_max| each bound max|a-b| from below when both tensors are finite
           and the same size); rms_a, rms_b and the ranges come from the stats;
           mean_abs, max_rel, p99_abs, rms_diff, cosine and l2 cover the leading
           values only. When the hashes differ and none of that shows a
           difference, max_abs is unknown (NaN): "differs, magnitude unknown".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from orchlog import kernels
from orchlog.compare.logits import agreement, rank_of
from orchlog.compare.tensor_metrics import TensorDiff, tensor_diff
from orchlog.compare.tensors import flat_tensor
from orchlog.read.batch import RecordBatch

DIFF_COLUMNS = tuple(f.name for f in dataclasses.fields(TensorDiff))
LOGITS_COLUMNS = ("top1_a", "top1_b", "top1_match", "kl", "rank_a", "rank_b")
COLUMNS = DIFF_COLUMNS + LOGITS_COLUMNS
BASES = ("tensor", "hash", "summary")
TENSOR, HASH, SUMMARY = range(3)


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


def _summary(t: PairTable, rows: np.ndarray) -> None:
    a, b, ia, ib = t.a, t.b, t.ia[rows], t.ib[rows]
    block = kernels.prefix_diffs(a.values, a.val_off, ia, b.values, b.val_off, ib)
    for k, c in enumerate(kernels.PREFIX_COLUMNS):
        t.m[c][rows] = block[:, k]
    # Whole-tensor stats: each side's rms and range, and a lower bound on max_abs.
    sa, sb = a.stats[ia], b.stats[ib]
    for col, k in (("rms_a", 3), ("min_a", 0), ("max_a", 1)):
        t.m[col][rows] = np.where(np.isnan(sa[:, k]), t.m[col][rows], sa[:, k])
    for col, k in (("rms_b", 3), ("min_b", 0), ("max_b", 1)):
        t.m[col][rows] = np.where(np.isnan(sb[:, k]), t.m[col][rows], sb[:, k])
    comparable = (
        (a.counts[ia] == 0).all(axis=1)
        & (b.counts[ib] == 0).all(axis=1)
        & (a.numel[ia] >= 0)
        & (a.numel[ia] == b.numel[ib])
    )
    with np.errstate(invalid="ignore"):
        gaps = np.abs(sa - sb)
        gaps[np.isnan(gaps)] = -1.0
        bound = np.where(comparable, gaps.max(axis=1), -1.0)
        current = t.m["max_abs"][rows]
        best = np.fmax(current, np.where(bound >= 0, bound, np.nan))
        # The hashes say they differ but no figure shows it: the magnitude is unknown.
        unseen = (t.hash_state[rows] == 0) & (best == 0)
        t.m["max_abs"][rows] = np.where(unseen, np.nan, best)


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


def _tensor_pair(t: PairTable, r: int, track_token: int | None) -> bool:
    """Pair r measured on the whole tensors; False when one turns out not to be readable as its record says
    (flat_tensor: damaged bytes, an unknown dtype), which leaves the pair to its summary."""
    i, j = t.ia[r], t.ib[r]
    ta, tb = flat_tensor(t.a, i), flat_tensor(t.b, j)
    if ta is None or tb is None:
        return False
    for c, v in _diff_row(tensor_diff(ta, tb)).items():
        t.m[c][r] = v
    if t.is_logits[r]:
        n = min(ta.size, tb.size)
        g = agreement(ta[:n], tb[:n], track_token)
        for c in ("top1_a", "top1_b", "kl", "rank_a", "rank_b"):
            value = getattr(g, c)
            t.m[c][r] = math.nan if value is None else value
        t.m["top1_match"][r] = float(g.top1_a == g.top1_b)
    return True


def measure(
    a: RecordBatch,
    b: RecordBatch,
    ia: np.ndarray,
    ib: np.ndarray,
    is_logits: Callable[[str | None], bool],
    track_token: int | None = None,
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
        np.full(n, SUMMARY, dtype=np.int8),
        hash_state,
        dtype_mismatch,
        _shape_mismatch(a, b, ia, ib),
        numel_mismatch,
        a.checkpoint[ia].per_row(is_logits, dtype=bool),
    )
    settled = (hash_state == 1) & ~dtype_mismatch & ~numel_mismatch
    full = ~settled & a.has_data()[ia] & b.has_data()[ib]
    t.basis[settled], t.basis[full] = HASH, TENSOR
    if settled.any():
        _settled(t, np.flatnonzero(settled), track_token)
    for r in np.flatnonzero(full):
        if not _tensor_pair(t, int(r), track_token):
            full[r] = False
            t.basis[r] = SUMMARY
    summary = np.flatnonzero(~settled & ~full)
    if len(summary):
        _summary(t, summary)
    return t
