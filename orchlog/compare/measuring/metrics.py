"""Metrics for every pair a round of alignment found, as columns, with the interval each is proven in.

Each pair is measured on the best basis both sides allow:
  tensor   both whole tensors are at hand (bytes, or every value inline): exact metrics
  hash     both carry the same blake3 over the same dtype and size (or, where neither has one, the same
           CRC-32 of the tensor's bytes in meta `crc32`, as msprobe's dumps do: two different tensors
           share one with probability 2**-32): equal, no data read; or the
           hashes differ where the format (legacy trace records) or --exact says that alone decides
  sketch   both carry a sketch: bounds from it, the stats and the leading values (orchlog/compare/measuring/bounds.py)
  bounds   otherwise: bounds from the leading values both sides carry and the whole-tensor stats
  leading  a legacy checkpoint JSONL side: the leading values both sides carry, graded as that
           format's own spec does (orchlog/compare/pairing/semantics.py)
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
from orchlog.compare.measuring import bounds
from orchlog.compare.measuring.logits import agreement, rank_of
from orchlog.compare.measuring.tensor_metrics import TensorDiff, tensor_diff
from orchlog.compare.pairing.aligned import Alignment, how_loaded, pair_arrays
from orchlog.compare.pairing.semantics import Semantics
from orchlog.compare.pairing.tensors import NARROW_FLOATS, flat_tensor
from orchlog.compare.pairing.window import Window
from orchlog.read.batch import STAT_FIELDS, RecordBatch
from orchlog.records import record
from orchlog.schema_gen import DTYPE_SIZES

DIFF_COLUMNS = tuple(f.name for f in dataclasses.fields(TensorDiff))
LOGITS_COLUMNS = ("top1_a", "top1_b", "top1_match", "kl", "rank_a", "rank_b")
# Scale-free figures of every pair, from the others: ‖a − b‖ / ‖a‖ and max|a − b| / max|a|.
RELATIVE_COLUMNS = ("rel_l2", "rel_max")
COLUMNS = DIFF_COLUMNS + LOGITS_COLUMNS + RELATIVE_COLUMNS
BASES = ("tensor", "hash", "sketch", "bounds", "leading")
TENSOR, HASH, SKETCH, BOUNDS, LEADING = range(5)
HIGHER_IS_BETTER = ("cosine", "top1_match")


@record
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
    # Pairs of the same rank but different extents compared on their common window without being
    # allowed to (--window): they fail. `alignment` says per pair how its tensors were lined up (None: as written).
    window_refused: np.ndarray = dataclasses.field(init=False)
    alignment: np.ndarray = dataclasses.field(init=False)  # object: Alignment or None

    def __post_init__(self) -> None:
        n = len(self.ia)
        self.window_refused = np.zeros(n, dtype=bool)
        self.alignment = np.full(n, None, dtype=object)

    def __len__(self) -> int:
        return len(self.ia)

    def take_owned(self, rows: np.ndarray) -> PairTable:
        """Pairs `rows` only, each side's records taken with their tensor bytes copied out of the read
        window (RecordBatch.take_owned): what may be kept after the round."""
        n = len(rows)
        out = PairTable(
            a=self.a.take_owned(self.ia[rows]),
            b=self.b.take_owned(self.ib[rows]),
            ia=np.arange(n),
            ib=np.arange(n),
            m={name: column[rows] for name, column in self.m.items()},
            basis=self.basis[rows],
            hash_state=self.hash_state[rows],
            dtype_mismatch=self.dtype_mismatch[rows],
            shape_mismatch=self.shape_mismatch[rows],
            numel_mismatch=self.numel_mismatch[rows],
            is_logits=self.is_logits[rows],
            lo={name: column[rows] for name, column in self.lo.items()},
            hi={name: column[rows] for name, column in self.hi.items()},
            semantics=self.semantics,
        )
        out.window_refused, out.alignment = self.window_refused[rows], self.alignment[rows]
        return out


def _or_of_words(words: np.ndarray) -> np.ndarray:
    """Each row's words OR-ed together, a column at a time (half the time of any(axis=1) on 8 columns)."""
    acc: np.ndarray = words[:, 0].copy()
    for k in range(1, words.shape[1]):
        acc |= words[:, k]
    return acc


def _hash_state(ha: np.ndarray, hb: np.ndarray) -> np.ndarray:
    """Per pair, int8: 1 the hashes are equal, 0 they differ, -1 a side has none (b"")."""
    if ha.dtype == hb.dtype and ha.dtype.kind == "S" and ha.dtype.itemsize and ha.dtype.itemsize % 8 == 0:
        # NUL-padded: as 64-bit words, "empty" is all zero and equality is equality of every word.
        wa = np.ascontiguousarray(ha).view(np.uint64).reshape(len(ha), -1)
        wb = np.ascontiguousarray(hb).view(np.uint64).reshape(len(hb), -1)
        known, same = (_or_of_words(wa) != 0) & (_or_of_words(wb) != 0), _or_of_words(wa ^ wb) == 0
    else:
        known, same = (ha != b"") & (hb != b""), ha == hb
    state: np.ndarray = np.where(known, same.astype(np.int8), np.int8(-1)).astype(np.int8)
    return state


def _checksum_state(state: np.ndarray, meta_a: np.ndarray, meta_b: np.ndarray) -> None:
    """Pairs without blake3 on both sides whose metas carry the same `crc32` become equal (1); a CRC that
    differs proves nothing about how far apart they are, so it leaves the pair unknown."""
    for p in np.flatnonzero(state == -1).tolist():
        ma, mb = meta_a[p], meta_b[p]
        if isinstance(ma, dict) and isinstance(mb, dict):
            ca, cb = ma.get("crc32"), mb.get("crc32")
            if isinstance(ca, str) and ca and ca == cb:
                state[p] = 1


def _shape_mismatch(a: RecordBatch, b: RecordBatch, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    len_a, len_b = np.diff(a.shape_off)[ia], np.diff(b.shape_off)[ib]
    known = a.has_shape[ia] & b.has_shape[ib]
    same_len = known & (len_a == len_b)
    differs = known & ~same_len
    rows = np.flatnonzero(same_len & (len_a > 0))
    if len(rows):
        starts_a, starts_b = a.shape_off[ia[rows]], b.shape_off[ib[rows]]
        lengths = len_a[rows]
        if lengths.min() == lengths.max():  # one rank for every pair (the usual round): a 2-D gather
            span = np.arange(int(lengths[0]))
            dims_a, dims_b = a.shape_dims[starts_a[:, None] + span], b.shape_dims[starts_b[:, None] + span]
            differs[rows] = (dims_a != dims_b).any(axis=1)
        else:
            steps = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            neq = (
                a.shape_dims[np.repeat(starts_a, lengths) + steps] != b.shape_dims[np.repeat(starts_b, lengths) + steps]
            )
            per_pair = np.add.reduceat(neq.astype(np.int64), np.cumsum(lengths) - lengths)
            differs[rows] = per_pair > 0
    out: np.ndarray = differs
    return out


def _nan_columns(n: int) -> dict[str, np.ndarray]:
    return dict(zip(COLUMNS, np.full((len(COLUMNS), n), np.nan)))  # rows of one block: one allocation


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
        _set_exact(t, rows, prefix)
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
    proven = bounds.partial(prefix, sa, sb, comparable, a.numel[ia], bounds.sketch_sums(a, ia, b, ib))
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


def _set_exact(t: PairTable, rows: np.ndarray, values: dict[str, np.ndarray]) -> None:
    """Figures measured exactly (`values`, one per row of `rows`), each its own interval; NaN and metrics not
    given stay as they were (unknown). Written straight into the table: a bounds.exact Interval scattered
    in afterwards cost 0.85 ms a round of 3,846 pairs, this 0.3 ms."""
    for c in bounds.BOUNDED:
        v = values.get(c)
        if v is None:
            continue
        known = ~np.isnan(v)
        at, v = (rows, v) if known.all() else (rows[known], v[known])
        t.lo[c][at] = v
        t.hi[c][at] = v


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


def _windows(t: PairTable, windows: Callable[[str | None], bool] | None) -> np.ndarray:
    """Find the pairs of the same rank and different extents; note their windows and which may pass."""
    found = np.zeros(len(t), dtype=bool)
    for r in np.flatnonzero(t.shape_mismatch).tolist():
        i, j = int(t.ia[r]), int(t.ib[r])
        name = t.a.checkpoint[i]
        window = Window.of(t.a.shape_of(i), t.b.shape_of(j), bool(windows and windows(name)))
        if window is None:
            continue
        t.alignment[r] = Alignment(window)
        found[r] = True
        # The window is what is compared; allowed, the pair is graded on it alone, else it fails.
        t.numel_mismatch[r] &= not window.allowed
        t.shape_mismatch[r] = t.window_refused[r] = not window.allowed
    return found


def _summary_windows(t: PairTable, rows: np.ndarray) -> None:
    """Pairs without both tensors compared on a window: the window's elements both sides' leading values
    hold. When they hold the whole window its figures are exact; otherwise their differences bound the
    window's from below and nothing bounds them from above, so the pair fails or stays undecided."""
    whole = np.zeros(len(rows), dtype=bool)
    sizes = np.zeros(len(rows), dtype=np.int64)
    for k, r in enumerate(rows.tolist()):
        i, j = int(t.ia[r]), int(t.ib[r])
        window = t.alignment[r].window
        va, vb = window.leading(t.a.row_values(i), t.b.row_values(j))
        for c, v in _diff_row(tensor_diff(va, vb)).items():
            t.m[c][r] = v
        whole[k], sizes[k] = len(va) == window.numel, window.numel
    seen = {c: t.m[c][rows] for c in bounds.BOUNDED}
    if whole.any():
        _set_exact(t, rows[whole], {c: v[whole] for c, v in seen.items()})
    part = ~whole
    if part.any():
        no_stats = np.full((int(part.sum()), len(STAT_FIELDS)), np.nan)
        proven = bounds.partial(
            {c: v[part] for c, v in seen.items()},
            no_stats,
            no_stats,
            np.zeros(int(part.sum()), bool),
            sizes[part],
            None,
        )
        _set_interval(t, rows[part], proven)


def _tensor_pair(t: PairTable, r: int, track_token: int | None) -> bool:
    """Pair r measured on the whole tensors; False when one turns out not to be readable as its record says
    (flat_tensor: damaged bytes, an unknown dtype), which leaves the pair to its partial evidence."""
    i, j = t.ia[r], t.ib[r]
    ta, tb = flat_tensor(t.a, i), flat_tensor(t.b, j)
    if ta is None or tb is None:
        return False
    window = t.alignment[r].window if t.alignment[r] is not None else None
    ta, tb, how = pair_arrays(
        ta,
        tb,
        (t.a.shape_of(i), t.b.shape_of(j)),
        window,
        (t.a.loader_of(i), t.b.loader_of(j)),
    )
    if how:
        t.alignment[r] = how
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


@record
class _Sources:
    """Where each of some rows keeps its whole tensor in memory, as tensor_diffs takes it; `ok` marks the rows it can take."""

    bufs: np.ndarray  # object
    start: np.ndarray
    count: np.ndarray
    code: np.ndarray
    ok: np.ndarray


def _code(dtype: str | None) -> int:
    return kernels.ELEMENT_CODES.get(dtype, -1) if dtype is not None else -1


def _sources(batch: RecordBatch, rows: np.ndarray) -> _Sources:
    """The rows' tensors as flat_tensor reads them: the bytes (when the dtype is known), else every value inline.

    Bytes behind a loader (a file still to read) are not taken: those pairs are measured one by one."""
    assert batch.data_buf is not None and batch.data_start is not None and batch.data_len is not None, (
        "RecordBatch.__post_init__ fills them"
    )
    dtype_code = batch.dtype.per_row(_code, dtype=np.int8)[rows]
    has_dtype = batch.dtype.codes[rows] >= 0
    length = batch.data_len[rows]
    itemsize = np.array([DTYPE_SIZES.get(name, 1) for name in kernels.ELEMENT_CODES] + [1])[dtype_code]
    with_bytes = (~kernels.is_none(batch.loader[rows]) | (length >= 0)) & has_dtype
    # Bytes in memory go to the kernel only when they hold exactly the record's elements (else flat_tensor
    # decides, one by one, whether they can be read at all).
    inline = with_bytes & (length >= 0) & (dtype_code >= 0) & (length == batch.numel[rows] * itemsize)
    by_values = ~with_bytes & batch.has_full_values()[rows]
    narrow = batch.dtype.per_row(lambda d: d in NARROW_FLOATS, dtype=bool)[rows]
    bufs = batch.data_buf[rows].copy()
    holder = np.empty(1, dtype=object)
    holder[0] = batch.values
    bufs[by_values] = holder
    off = batch.val_off[rows]
    return _Sources(
        bufs=bufs,
        start=np.where(by_values, off * 8, batch.data_start[rows]),
        count=np.where(by_values, batch.val_off[rows + 1] - off, length // itemsize),
        code=np.where(by_values, np.where(narrow, kernels.F64_AS_F32, kernels.ELEMENT_CODES["f64"]), dtype_code),
        ok=inline | by_values,
    )


def _tensor_pairs(t: PairTable, rows: np.ndarray, track_token: int | None) -> np.ndarray:
    """Every whole-tensor pair of `rows`: those in memory in one native call, the rest one by one; returns
    the rows whose tensors turned out not to be readable as their records say.

    One by one: logits (they need more than differences), pairs compared on a window, and sides that a
    map views, derives or gathers (their tensors are made by their loaders, not read as stored)."""
    aligned = ~kernels.is_none(t.alignment[rows])
    plain = rows[~t.is_logits[rows] & ~aligned]
    done = np.zeros(0, dtype=np.int64)
    if len(plain) and kernels.NATIVE:
        sa, sb = _sources(t.a, t.ia[plain]), _sources(t.b, t.ib[plain])
        take = np.flatnonzero(sa.ok & sb.ok)
        if len(take):
            measured = kernels.tensor_diffs(
                sa.bufs[take], sa.start[take], sa.count[take], sa.code[take],
                sb.bufs[take], sb.start[take], sb.count[take], sb.code[take],
            )  # fmt: skip
            assert measured is not None
            block, flagged = measured
            if flagged.any():
                block, done = block[~flagged], plain[take[~flagged]]
            else:
                done = plain[take]
            for c, column in zip(DIFF_COLUMNS, block.T):  # contiguous columns, as the kernel writes them
                t.m[c][done] = column
    left = np.ones(len(t), dtype=bool)
    left[done] = False
    rest: np.ndarray = rows[left[rows]]
    measured_ok = np.array([_tensor_pair(t, int(r), track_token) for r in rest.tolist()], dtype=bool)
    return rest[~measured_ok] if len(rest) else rest


def _relative(t: PairTable) -> None:
    """rel_l2 and rel_max with their intervals: l2 and max_abs over the reference's exact ‖a‖ and max|a| (over
    the elements compared: a window's on whole tensors, else the whole tensor's, which the stats cover)."""
    whole = t.basis == TENSOR
    n = np.where(whole, t.m["n"], t.a.numel[t.ia].astype(np.float64))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        norm = t.m["rms_a"] * np.sqrt(n)
        peak = np.where(whole, np.fmax(np.abs(t.m["min_a"]), np.abs(t.m["max_a"])), t.a.stats[t.ia, 4])
        for column, base, denominator in (("rel_l2", "l2", norm), ("rel_max", "max_abs", peak)):
            # 0 / 0 reads 0 (both all zero); anything over 0 is infinitely far.
            t.m[column], t.lo[column], t.hi[column] = (
                np.where(x == 0, 0.0, x / denominator) for x in (t.m[base], t.lo[base], t.hi[base])
            )


def measure(
    a: RecordBatch,
    b: RecordBatch,
    ia: np.ndarray,
    ib: np.ndarray,
    is_logits: Callable[[str | None], bool],
    track_token: int | None = None,
    semantics: Semantics = Semantics(),
    windows: Callable[[str | None], bool] | None = None,
) -> PairTable:
    """Metrics for the pairs (ia[p], ib[p]) of two batches; `windows` says which canonical checkpoints may be
    compared on the common window of two extents."""
    n = len(ia)
    dtype_a, dtype_b = a.dtype[ia], b.dtype[ib]
    numel_a, numel_b = a.numel[ia], b.numel[ib]
    numel_mismatch = (numel_a >= 0) & (numel_b >= 0) & (numel_a != numel_b)
    hash_state = _hash_state(a.blake3[ia], b.blake3[ib])
    _checksum_state(hash_state, a.meta[ia], b.meta[ib])
    said = [d.per_row(lambda s: s is not None, dtype=bool) for d in (dtype_a, dtype_b)]
    dtype_mismatch = said[0] & said[1] & ~dtype_a.equal_rows(dtype_b)
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
    windowed = _windows(t, windows)
    settled = (hash_state == 1) & ~dtype_mismatch & ~numel_mismatch & ~windowed
    full = ~settled & a.has_data()[ia] & b.has_data()[ib]
    t.basis[settled], t.basis[full] = HASH, TENSOR
    if settled.any():
        _settled(t, np.flatnonzero(settled), track_token)
    if full.any():
        unreadable = _tensor_pairs(t, np.flatnonzero(full), track_token)
        full[unreadable] = False
        t.basis[unreadable] = BOUNDS
    exact = np.flatnonzero(settled | full)
    # Nothing is proven until a basis says so: a pair no path below fills stays undecided, never passes.
    unknown = bounds.unknown(n)
    t.lo, t.hi = unknown.lo, unknown.hi
    if len(exact):
        _set_exact(t, exact, {c: t.m[c][exact] for c in bounds.BOUNDED})
    partial = ~settled & ~full
    if (partial & windowed).any():
        _summary_windows(t, np.flatnonzero(partial & windowed))
    if (partial & ~windowed).any():
        _partial(t, np.flatnonzero(partial & ~windowed))
    _relative(t)
    loaded = ~kernels.is_none(a.loader[ia]) | ~kernels.is_none(b.loader[ib])
    for r in np.flatnonzero(partial & loaded).tolist():  # a view, derivation or gathering still says so
        how = (how_loaded(a.loader[ia[r]]), how_loaded(b.loader[ib[r]]))
        if any(how):
            t.alignment[r] = dataclasses.replace(t.alignment[r] or Alignment(), how=how)
    return t
