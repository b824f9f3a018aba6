"""The comparer's hot loops: native kernels when built, NumPy twins otherwise.

`orchlog._kernels` (native/python/kernels/) does each job in one or two
passes; the functions here call it when it is importable and fall back to
NumPy code that computes the same quantities, so a machine without the
extension gets the same answers, only slower. Tests run both and compare.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from orchlog.records import record

_native: ModuleType | None
try:
    from orchlog import _kernels as _native
except ImportError:  # pragma: no cover - the extension is built by every install path
    _native = None

NATIVE = _native is not None
REL_FLOOR = 1e-8  # max_rel divides by max(|a|, REL_FLOOR)


@record(frozen=True)
class DiffSums:
    """One pass over two equal-length arrays: the sums every difference metric is made of."""

    n: int
    all_finite: bool  # False: some element on either side is NaN or Inf; the sums below are then unusable
    sum_abs: float
    sum_d2: float
    sum_a2: float
    sum_b2: float
    max_abs: float
    max_rel: float
    min_a: float
    max_a: float
    min_b: float
    max_b: float


def _as_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both sides flat, contiguous, one float dtype (f32 when both fit, else f64), same length."""
    dtype = np.float32 if a.dtype == np.float32 and b.dtype == np.float32 else np.float64
    n = min(a.size, b.size)
    a = np.ascontiguousarray(a.reshape(-1)[:n], dtype=dtype)
    b = np.ascontiguousarray(b.reshape(-1)[:n], dtype=dtype)
    return a, b


def diff_sums(a: np.ndarray, b: np.ndarray, native: bool = True) -> DiffSums:
    """The sums over the common prefix of a and b (f32 inputs stay f32, anything else is f64)."""
    a, b = _as_pair(a, b)
    if native and _native is not None:
        return DiffSums(**_native.pair_metrics(a, b))
    return _diff_sums_numpy(a, b)


def _diff_sums_numpy(a: np.ndarray, b: np.ndarray) -> DiffSums:
    n = a.size
    if n == 0:
        return DiffSums(0, True, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, math.inf, -math.inf, math.inf, -math.inf)
    with np.errstate(all="ignore"):
        finite = bool(np.isfinite(a).all() and np.isfinite(b).all())
        d = a - b
        ad = np.abs(d)
        rel = ad / np.maximum(np.abs(a), a.dtype.type(REL_FLOOR))
        return DiffSums(
            n=n,
            all_finite=finite,
            sum_abs=float(ad.sum(dtype=np.float64)),
            sum_d2=float(np.dot(d.astype(np.float64), d)),
            sum_a2=float(np.dot(a.astype(np.float64), a)),
            sum_b2=float(np.dot(b.astype(np.float64), b)),
            max_abs=float(ad.max()),
            max_rel=float(rel.max()),
            min_a=float(a.min()),
            max_a=float(a.max()),
            min_b=float(b.min()),
            max_b=float(b.max()),
        )


def abs_diff_quantile(a: np.ndarray, b: np.ndarray, q: float, native: bool = True) -> float:
    """The nearest-rank q-quantile of |a-b| (NumPy's method="inverted_cdf"), exactly.

    Both sides must be finite; |a-b| is taken in the arrays' own precision.
    """
    a, b = _as_pair(a, b)
    n = a.size
    if n == 0:
        return math.nan
    k = _nearest_rank(q, n)
    if native and _native is not None:
        return float(_native.abs_diff_select(a, b, k))
    ad = np.abs(a - b)
    return float(np.partition(ad, k)[k])


def _nearest_rank(q: float, n: int) -> int:
    return max(0, math.ceil(q * n) - 1)


def diff_sums_and_quantile(a: np.ndarray, b: np.ndarray, q: float, native: bool = True) -> tuple[DiffSums, float]:
    """diff_sums and abs_diff_quantile of one pair, natively in one read of the arrays (large ones are read
    from memory once, not twice); the quantile is NaN when a side is not finite."""
    a, b = _as_pair(a, b)
    if a.size == 0:
        return diff_sums(a, b, native), math.nan
    if native and _native is not None:
        found = _native.pair_metrics(a, b, _nearest_rank(q, a.size))
        value = found.pop("rank_value")
        sums = DiffSums(**found)
    else:
        sums = _diff_sums_numpy(a, b)
        value = abs_diff_quantile(a, b, q, native=False) if sums.all_finite else math.nan
    return sums, float(value) if sums.all_finite else math.nan


# The figures of a pair's difference, in the order the reports show them.
ERROR_COLUMNS = ("max_abs", "mean_abs", "max_rel", "p99_abs", "rms_a", "rms_b", "rms_diff", "cosine", "l2")
PREFIX_COLUMNS = ("n", *ERROR_COLUMNS, "min_a", "max_a", "min_b", "max_b", "nonfinite_mismatch")
_MATRIX_WIDTH = 256  # the NumPy twin measures pairs up to this many values as one matrix, longer ones one by one


def prefix_diffs(
    values_a: np.ndarray,
    offsets_a: np.ndarray,
    rows_a: np.ndarray,
    values_b: np.ndarray,
    offsets_b: np.ndarray,
    rows_b: np.ndarray,
    native: bool = True,
) -> np.ndarray:
    """Metrics over the common leading values of many pairs of ragged rows: one row of PREFIX_COLUMNS per pair.

    Pair p compares values_a[offsets_a[rows_a[p]]:...] with the same row of b.
    Both NaN, or the same infinity, agree; any other non-finite position is a
    mismatch (max_abs becomes infinite); the metrics cover the positions
    where both sides are finite, and are NaN where there are none.
    """
    args = [
        np.ascontiguousarray(x, dtype=t)
        for x, t in (
            (values_a, np.float64),
            (offsets_a, np.int64),
            (rows_a, np.int64),
            (values_b, np.float64),
            (offsets_b, np.int64),
            (rows_b, np.int64),
        )
    ]
    if native and _native is not None:
        sums: np.ndarray = _native.prefix_diffs(*args)
        return sums
    return _prefix_diffs_numpy(*args)


def _prefix_diffs_numpy(
    va: np.ndarray, oa: np.ndarray, ia: np.ndarray, vb: np.ndarray, ob: np.ndarray, ib: np.ndarray
) -> np.ndarray:
    m = np.minimum(np.diff(oa)[ia], np.diff(ob)[ib])
    out = np.empty((len(ia), len(PREFIX_COLUMNS)))
    short = np.flatnonzero(m <= _MATRIX_WIDTH)
    if len(short):
        out[short] = _prefix_matrix(va, oa[ia[short]], vb, ob[ib[short]], m[short])
    for p in np.flatnonzero(m > _MATRIX_WIDTH):
        out[p] = _prefix_matrix(va, oa[ia[p : p + 1]], vb, ob[ib[p : p + 1]], m[p : p + 1])[0]
    return out


def _prefix_matrix(
    va: np.ndarray, starts_a: np.ndarray, vb: np.ndarray, starts_b: np.ndarray, m: np.ndarray
) -> np.ndarray:
    """prefix_diffs for rows laid out as one (pairs x longest) matrix, zeros past each row's end."""
    width = max(int(m.max()), 1)
    cols = np.arange(width)
    mask = cols < m[:, None]

    def gather(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
        if values.size == 0:
            return np.zeros(mask.shape)
        return np.where(mask, values[np.where(mask, starts[:, None] + cols, 0)], 0.0)

    x, y = gather(va, starts_a), gather(vb, starts_b)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        fx, fy = np.isfinite(x), np.isfinite(y)
        both = mask & fx & fy
        agree = mask & ~fx & ~fy & ((np.isnan(x) & np.isnan(y)) | (x == y))
        mismatch = (mask & ~both & ~agree).sum(axis=1)
        count = both.sum(axis=1)
        x, y = np.where(both, x, 0.0), np.where(both, y, 0.0)
        d = x - y
        ad = np.abs(d)
        sa2, sb2, sd2 = (x * x).sum(axis=1), (y * y).sum(axis=1), (d * d).sum(axis=1)
        max_abs = ad.max(axis=1)
        ranked = np.sort(np.where(both, ad, np.inf), axis=1)
        k = np.clip(np.ceil(0.99 * count).astype(np.int64) - 1, 0, width - 1)
        p99 = np.take_along_axis(ranked, k[:, None], axis=1)[:, 0]
        norms = np.where(sa2 == sb2, sa2, np.sqrt(sa2) * np.sqrt(sb2))  # as cosine_from_sums takes them
        cos = np.where((sa2 == 0) | (sb2 == 0), np.where(sa2 == sb2, 1.0, 0.0), (sa2 + sb2 - sd2) / (2.0 * norms))
        out = np.column_stack(
            [
                m,
                np.where(mismatch > 0, np.inf, max_abs),
                ad.sum(axis=1) / count,
                (ad / np.maximum(np.abs(x), REL_FLOOR)).max(axis=1),
                p99,
                np.sqrt(sa2 / count),
                np.sqrt(sb2 / count),
                np.sqrt(sd2 / count),
                np.clip(cos, -1.0, 1.0),
                np.sqrt(sd2),
                np.where(both, x, np.inf).min(axis=1),
                np.where(both, x, -np.inf).max(axis=1),
                np.where(both, y, np.inf).min(axis=1),
                np.where(both, y, -np.inf).max(axis=1),
                mismatch,
            ]
        ).astype(np.float64)
    empty = count == 0
    out[empty, 2:14] = np.nan
    out[empty & (mismatch == 0), 1] = np.nan
    return out


# Element codes of tensor_diffs: the schema dtypes in order, then f64 values that hold f32 numbers
# (the leading values of a f32/f16/bf16 record, read back from text or msgpack).
ELEMENT_CODES = {"f32": 0, "f16": 1, "bf16": 2, "f64": 3, "i8": 4, "u8": 5, "i32": 6, "i64": 7}
F64_AS_F32 = 8


def tensor_diffs(
    bufs_a: Any,
    start_a: np.ndarray,
    count_a: np.ndarray,
    code_a: np.ndarray,
    bufs_b: Any,
    start_b: np.ndarray,
    count_b: np.ndarray,
    code_b: np.ndarray,
    p99: bool = True,
) -> tuple[np.ndarray, np.ndarray] | None:
    """PREFIX_COLUMNS of many whole-tensor pairs, from their bytes, in one call; None without the extension.

    Pair p compares count_a[p] elements of code code_a[p] starting at byte start_a[p] of the
    buffer bufs_a[p] with the same of b, over their common length, exactly as
    tensor_metrics.tensor_diff does on the arrays compare.tensors.flat_tensor makes of them.
    Returns (rows, flagged): rows [pairs, columns], a view of the kernel's columns (each one
    contiguous); a flagged pair holds a NaN or Inf on some side and its row is left unset, for
    tensor_diff's careful path. The twin without the extension is that per-pair path itself
    (orchlog.compare.measuring.metrics).
    """
    if _native is None:
        return None
    ints = [np.ascontiguousarray(x, dtype=np.int64) for x in (start_a, count_a, start_b, count_b)]
    codes = [np.ascontiguousarray(x, dtype=np.int8) for x in (code_a, code_b)]
    columns, flagged = _native.tensor_diffs(bufs_a, ints[0], ints[1], codes[0], bufs_b, ints[2], ints[3], codes[1], p99)
    return columns.T, flagged.astype(bool)  # the kernel writes by column: each column is contiguous


def sketch_sums(
    sketch_a: np.ndarray, rows_a: np.ndarray, sketch_b: np.ndarray, rows_b: np.ndarray, native: bool = True
) -> np.ndarray:
    """[k, 3] for the pairs (rows_a[p], rows_b[p]) of two [n, R] sketch columns (f32, as a batch holds the
    schema's f32 rows, or f64): the sums over the R rows of (a - b)^2, of |a| + |b| and of (|a| + |b|)^2,
    in f64 (NaN where a row holds a NaN)."""
    rows = np.float32 if sketch_a.dtype == np.float32 and sketch_b.dtype == np.float32 else np.float64
    args = [
        np.ascontiguousarray(x, dtype=t)
        for x, t in ((sketch_a, rows), (rows_a, np.int64), (sketch_b, rows), (rows_b, np.int64))
    ]
    if native and _native is not None:
        sums: np.ndarray = _native.sketch_sums(*args)
        return sums
    sa, sb = args[0][args[1]].astype(np.float64), args[2][args[3]].astype(np.float64)
    diff = sa - sb
    u = np.abs(sa) + np.abs(sb)
    return np.stack([np.einsum("ij,ij->i", diff, diff), u.sum(axis=1), np.einsum("ij,ij->i", u, u)], axis=1)


# How decode_frames stopped: at the end of its window, at a frame running past it, at a frame it
# hands to the Python decoder, or after a record whose large tensor it stepped over.
FRAMES_END, FRAMES_MORE, FRAMES_OTHER, FRAMES_SKIP = range(4)


def decode_frames(chunk: np.ndarray, base: int, inline_max: int, trail: int = 0) -> dict[str, Any]:
    """Columns for the record frames of a window of a binary stream starting at file offset `base`
    (native/python/kernels/frames.hpp); `stop` and `next` say why it stopped and where to go on, and
    `trail` how many key-value pairs of the last frame follow its tensor bytes at `next` (the frame
    checksum), which the next call, given them, skips first."""
    assert _native is not None
    columns: dict[str, Any] = _native.decode_frames(chunk, base, inline_max, trail)
    return columns


def map_window(fd: int, offset: int, length: int) -> np.ndarray:
    """[offset, offset + length) of the open file `fd`, mapped read-only, as a read-only uint8 array; unmapped
    (on a thread of the extension's own, off the caller's path) once nothing refers to it. Native only."""
    assert _native is not None
    window: np.ndarray = _native.map_window(fd, offset, length)
    return window


def parse_orchlog_jsonl(buf: bytes | memoryview, first_line: int, native: bool = True) -> dict[str, Any] | None:
    """Columns for the canonical record lines of `buf` (see native/python/kernels/jsonl_columns.hpp), or None without the extension.

    Lines the kernel does not take (headers, non-canonical or broken lines) come
    back in `other` as (line number, start, end) triples for the Python reader.
    """
    if not (native and _native is not None):
        return None
    cols: dict[str, Any] | None = _native.parse_orchlog_jsonl(buf, first_line)
    return cols


def _crc32c_table() -> list[int]:
    table: list[int] = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
        table.append(c)
    return table


_CRC32C_TABLE: list[int] | None = None


def crc32c(data: bytes | memoryview | np.ndarray, crc: int = 0, native: bool = True) -> int:
    """CRC-32C (Castagnoli) of data, continuing from crc: crc32c(b, crc32c(a)) == crc32c(a + b)."""
    if native and _native is not None:
        return int(_native.crc32c(data, crc))
    global _CRC32C_TABLE
    if _CRC32C_TABLE is None:
        _CRC32C_TABLE = _crc32c_table()
    table, c = _CRC32C_TABLE, crc ^ 0xFFFFFFFF
    for byte in bytes(data):
        c = (c >> 8) ^ table[(c ^ byte) & 0xFF]
    return c ^ 0xFFFFFFFF


def exp(x: np.ndarray, native: bool = True) -> np.ndarray:
    """exp of every element in f64 by the C library's exp, as Python's math.exp gives it, on every machine.
    NumPy runs its own f64 exp where the CPU has AVX-512 (and the C library's elsewhere); the two differ in
    the last bit of about one element in twenty, and a KL divergence's last digits differed with them."""
    x = np.asarray(x, dtype=np.float64)
    if native and _native is not None:
        out: np.ndarray = _native.libm_exp(x)
        return out
    return np.fromiter(map(_exp_or_inf, x.ravel().tolist()), dtype=np.float64, count=x.size).reshape(x.shape)


def _exp_or_inf(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:  # where the C library's exp gives +inf
        return math.inf


def is_none(column: np.ndarray, native: bool = True) -> np.ndarray:
    """Which elements of a 1-D object array are None (bool array): by pointer in the extension, where
    NumPy's `column == None` calls each element's comparison (10x the time, and an element such as an
    array answers it elementwise)."""
    if native and _native is not None and column.dtype == object and column.ndim == 1:
        out: np.ndarray = _native.is_none(column)
        return out
    return np.fromiter((item is None for item in column), dtype=bool, count=len(column))
