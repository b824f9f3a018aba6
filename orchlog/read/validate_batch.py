"""The schema checks of `orchlog validate` over a whole RecordBatch as array work: which rows may hold a problem.

    suspects = suspect_rows(batch, strict=True, expected_values=10)   # bool per row
    has, prev = previous_seqs(batch, last_seq)                          # the seq each row must follow

`validate.check_record` says what is wrong with one record; checking a trace of millions that way cost about
60 us a record, nearly all of it making the record. These masks are conservative: every row for which
check_record would say something is marked (the float comparisons here are the same operations, with half the
rounding slack, so that a row near a bound is marked too), and a marked row then goes through check_record
itself, which words the problem. A row left unmarked has none.
"""

from __future__ import annotations

import numpy as np

from orchlog.read.batch import NONE, RecordBatch
from orchlog.schema_gen import DTYPE_SIZES

F64_EPS = float(np.finfo(np.float64).eps)  # the spacing of f64 at 1: check_record's rounding slack is in these
_HEX = np.zeros(256, dtype=bool)
_HEX[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = True
_EXACT = float(2**53)  # products of dims up to here are exact in f64


def segments(off: np.ndarray, flat: np.ndarray, ufunc: np.ufunc, empty: float) -> np.ndarray:
    """ufunc.reduce of each row's items of a ragged column (`empty` for a row with none)."""
    n = len(off) - 1
    out = np.full(n, empty, dtype=np.float64)
    lengths = np.diff(off)
    filled = lengths > 0
    if filled.any():
        out[filled] = ufunc.reduceat(flat[: off[-1]].astype(np.float64, copy=False), off[:-1][filled])
    return out


def _hex_digest_or_absent(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(64 lowercase hex digits, absent) for each row of the blake3 column (S64, b"" when absent)."""
    n = len(column)
    if column.dtype != np.dtype("S64"):  # any other layout: every present row is looked at one by one
        return np.zeros(n, dtype=bool), np.array([len(v) == 0 for v in column.tolist()], dtype=bool)
    raw = np.ascontiguousarray(column).view(np.uint8).reshape(n, 64)
    return np.asarray(_HEX[raw].all(axis=1)), np.asarray(raw.max(axis=1) == 0)


def suspect_rows(batch: RecordBatch, strict: bool, expected_values: int | None) -> np.ndarray:
    """Rows for which check_record(batch.record(i), strict, expected_values) may report a problem."""
    b = batch
    bad = np.zeros(len(b), dtype=bool)
    for column in (b.token_idx, b.layer, b.step, b.seq):
        bad |= column < NONE  # NONE (-1) reads back as None: any other negative is reported
    rank, world = b.rank, b.world_size
    bad |= (rank == NONE) | (world == NONE) | (world < 1) | (rank < 0) | (rank >= np.maximum(world, 1))
    bad |= b.dtype.per_row(lambda d: d is not None and d not in DTYPE_SIZES, dtype=bool)

    known = b.numel != NONE
    numel = b.numel.astype(np.float64)
    smallest = segments(b.shape_off, b.shape_dims, np.minimum, np.inf)
    product = segments(b.shape_off, b.shape_dims, np.multiply, 1.0)
    bad |= b.has_shape.astype(bool) & ((smallest < 0) | (known & ((product != numel) | (product > _EXACT))))

    n_values = np.diff(b.val_off)
    bad |= known & (n_values > b.numel)
    if expected_values is not None:
        whole = expected_values < 0 or b.full_reason.per_row(lambda r: r is not None, dtype=bool)
        want = np.where(whole, b.numel, np.minimum(expected_values, b.numel))
        bad |= known & (n_values != want)

    digest, absent = _hex_digest_or_absent(b.blake3)
    bad |= ~absent & ~digest
    if strict:
        bad |= absent | (b.seq == NONE)
        bad |= _stats_suspects(b, known, n_values)
    return bad


def _stats_suspects(b: RecordBatch, known: np.ndarray, n_values: np.ndarray) -> np.ndarray:
    """Rows for which validate._check_stats may report a problem."""
    floats, counts = b.stats, b.counts
    present = ~np.isnan(floats)
    no_stats = (counts[:, 0] == NONE) & ~present.any(axis=1)
    nan_count, inf_count = np.maximum(counts[:, 0], 0), np.maximum(counts[:, 1], 0)
    counted = nan_count + inf_count
    finite = b.numel - counted
    bad = no_stats | (known & (counted > b.numel))
    bad |= known & (finite == 0) & present.any(axis=1)
    bad |= known & (finite != 0) & ~present.all(axis=1)

    lo, hi, mean, rms, abs_max = (floats[:, k] for k in range(5))
    with np.errstate(invalid="ignore", over="ignore"):
        # Half the slack check_record allows: a row within rounding of its bound is looked at there.
        slack = 4 * F64_EPS * np.maximum(finite, 1) * abs_max / 2
        inside = (lo - slack <= mean) & (mean <= hi + slack) & (np.abs(mean) <= rms + slack)
        sound = (lo <= hi) & (abs_max == np.maximum(np.abs(lo), np.abs(hi))) & (rms >= 0) & inside
        sound &= np.isfinite(lo) & np.isfinite(hi) & np.isfinite(abs_max)  # stats over finite elements
    checked = known & (finite != 0) & present.all(axis=1)
    bad |= checked & ~sound

    values = b.values[: b.val_off[-1]]
    finite_values = np.isfinite(values)
    with np.errstate(invalid="ignore"):
        lowest = segments(b.val_off, np.where(finite_values, values, np.inf), np.minimum, np.inf)
        highest = segments(b.val_off, np.where(finite_values, values, -np.inf), np.maximum, -np.inf)
        bounded = ~np.isnan(lo) & ~np.isnan(hi)
        bad |= bounded & ((lowest < lo) | (highest > hi))
    nans = segments(b.val_off, np.isnan(values), np.add, 0.0)
    infs = segments(b.val_off, np.isinf(values), np.add, 0.0)
    bad |= (n_values > 0) & ((nans > nan_count) | (infs > inf_count))
    out: np.ndarray = bad
    return out


def previous_seqs(batch: RecordBatch, last_seq: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(whether each row has a seq, the seq it must follow: its file's previous record's, -1 for a file's
    first); `last_seq` (file -> last seq seen) carries from batch to batch and is updated here."""
    seq = batch.seq
    has = seq != NONE
    prev = np.full(len(batch), -1, dtype=np.int64)
    rows_with = np.flatnonzero(has)
    if not len(rows_with):
        return has, prev
    canonical: dict[str | None, int] = {}
    paths = batch.path.per_row(lambda p: canonical.setdefault(p, len(canonical)), dtype=np.int64)[rows_with]
    names = list(canonical)
    for code in np.unique(paths).tolist():
        rows = rows_with[paths == code]
        name = names[code]
        assert name is not None, "every record has a path"
        chain = seq[rows]
        prev[rows[0]] = last_seq.get(name, -1)
        prev[rows[1:]] = chain[:-1]
        last_seq[name] = int(chain[-1])
    return has, prev
