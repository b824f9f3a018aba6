"""`orchlog validate --verify-hashes` over a whole RecordBatch: the rows whose hashes hold, without their records.

    unsure, sound = hash_verdicts(batch, framed=True)

`validate._verify` says what is wrong with one record's frame checksum, BLAKE3, leading values, stats and sketch,
each recomputed from its bytes; made record by record that cost about 150 us a record, nearly all of it making
the record. Here a batch's tensors in memory are digested by the same C++ core straight from the read window,
and the digests compared with the rows' columns as arrays. A row is `sound` when every check passed (verify
would say it checked the hash and found nothing); every other row whose bytes are at hand, or whose checksum
was not found right, is `unsure` and goes through `_verify` itself, which words the problem. A row that is
neither has nothing to check: no tensor bytes, not every value, and no frame checksum.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from orchlog import kernels
from orchlog.encoding import dtypes
from orchlog.read.batch import NONE, RecordBatch, ragged_take
from orchlog.read.validate_batch import segments
from orchlog.schema_gen import DTYPE_SIZES

_EXACT = float(2**53)  # products of dims up to here are exact in f64
_STATS = 5  # min, max, mean, rms, abs_max; then nan_count and inf_count


def hash_verdicts(batch: RecordBatch, framed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(unsure, sound) per row of `batch`, as above. The frame checksums a batch carries are checked here;
    `framed`: its rows are a binary stream's frames whatever it carries (a batch without them is unsure)."""
    b = batch
    assert b.data_len is not None, "__post_init__ fills it"
    in_memory = b.data_len >= 0
    from_values = ~in_memory & kernels.is_none(b.loader) & b.has_full_values()  # _verify rebuilds the bytes
    unsure = b.has_data() & ~in_memory & ~from_values  # bytes to load: _verify loads them
    if b.frame_checks is not None:
        unsure |= ~b.frame_checks.sound()
    elif framed:
        unsure[:] = True
    size = b.dtype.per_row(lambda d: DTYPE_SIZES.get(d, 0) if d is not None else 0, dtype=np.int64)
    digestible = _digestible(b, size)
    unsure |= (in_memory & ~(digestible & (b.data_len == b.numel * size))) | (from_values & ~digestible)
    sound = np.zeros(len(b), dtype=bool)
    rows = np.flatnonzero(in_memory & ~unsure)
    if len(rows):
        sound[rows] = _digests_agree(b, rows, _spans_in_memory(b, rows)) & _heads_agree(b, rows)
    rows = np.flatnonzero(from_values & ~unsure)
    if len(rows):
        exact, spans = _rebuilt(b, rows)
        unsure[rows[~exact]] = True  # NaN or i64 past 2**53: _verify says the bytes cannot be rebuilt
        rows = rows[exact]
        if len(rows):
            sound[rows] = _digests_agree(b, rows, spans)
    unsure |= (in_memory | from_values) & ~sound
    return unsure, sound


def _digestible(b: RecordBatch, size: np.ndarray) -> np.ndarray:
    """Rows of numel elements of a known dtype (`size` bytes each), numel = prod(shape), with a BLAKE3 to check
    and no more leading values than elements."""
    product = segments(b.shape_off, b.shape_dims, np.multiply, 1.0)
    shaped = ~b.has_shape.astype(bool) | ((product == b.numel) & (product <= _EXACT))
    ok: np.ndarray = (size > 0) & (b.numel != NONE) & (np.diff(b.val_off) <= b.numel) & shaped & (b.blake3 != b"")
    return ok


class Spans(NamedTuple):
    """Where tensors' bytes lie: in buffers[i] (a read window, shared), lengths[i] bytes from starts[i]."""

    buffers: list[object]
    starts: np.ndarray  # int64
    lengths: np.ndarray  # int64


def _spans_in_memory(b: RecordBatch, rows: np.ndarray) -> Spans:
    """The rows' tensor bytes where they lie, in the read window."""
    assert b.data_len is not None and b.data_start is not None and b.data_buf is not None, "__post_init__ fills them"
    return Spans(b.data_buf[rows].tolist(), b.data_start[rows], b.data_len[rows])


def _rebuilt(b: RecordBatch, rows: np.ndarray) -> tuple[np.ndarray, Spans]:
    """(exact, spans): the tensors of `rows` rebuilt from their every value, as _verify rebuilds one, a dtype at
    a time; `exact` says which rows that gives back (dtypes.exact_in_f64), and the spans are theirs."""
    off, values = ragged_take(b.val_off, b.values, rows)
    counts = np.diff(off)
    codes = b.dtype[rows].codes
    code_of_value = np.repeat(codes, counts)
    exact = np.zeros(len(rows), dtype=bool)
    buffers = np.empty(len(rows), dtype=object)
    starts = np.zeros(len(rows), dtype=np.int64)
    lengths = np.zeros(len(rows), dtype=np.int64)
    for code in np.unique(codes).tolist():
        dtype = b.dtype.table[code]
        members = np.flatnonzero(codes == code)
        group = values[code_of_value == code]
        within = np.concatenate([[0], np.cumsum(counts[members])])  # each member's first value in the group
        exact[members] = segments(within, ~dtypes.exact_in_f64(group, dtype), np.add, 0.0) == 0
        holder = np.empty(1, dtype=object)
        holder[0] = dtypes.from_f64(group, dtype).view(np.uint8)
        buffers[members] = holder
        starts[members] = within[:-1] * DTYPE_SIZES[dtype]
        lengths[members] = counts[members] * DTYPE_SIZES[dtype]
    return exact, Spans(buffers[exact].tolist(), starts[exact], lengths[exact])


def _digests_agree(b: RecordBatch, rows: np.ndarray, spans: Spans) -> np.ndarray:
    """For each of `rows`, its tensor's bytes where `spans` says: BLAKE3, stats and sketch as
    the data gives them, compared as _verify compares them."""
    from orchlog import _native

    m = len(rows)
    digests = _native.digest_spans(*spans, b.dtype[rows].tolist())
    stats = np.frombuffer(digests["stats"], dtype=np.float64).reshape(m, -1)
    sketch = np.frombuffer(digests["sketch"], dtype=np.float32).reshape(m, -1)
    agree: np.ndarray = np.frombuffer(digests["blake3"], dtype="S64") == b.blake3[rows]
    agree &= _stats_agree(b, rows, stats)
    said = b.sketch[rows]
    unsaid = np.isnan(said).all(axis=1)  # the record has no sketch: nothing to compare
    agree &= unsaid | (said == sketch).all(axis=1)
    return agree


def _heads_agree(b: RecordBatch, rows: np.ndarray) -> np.ndarray:
    """Each row's leading values equal the first elements of its data (NaN equal to NaN)."""
    assert b.data_start is not None and b.data_buf is not None, "__post_init__ fills them"
    off, said = ragged_take(b.val_off, b.values, rows)
    counts = np.diff(off)
    got = np.empty(len(said), dtype=np.float64)
    # The elements of rows that share a buffer and a dtype are gathered at once: every row's first values are
    # at its start, one element after another.
    buffers = np.fromiter(map(id, b.data_buf[rows].tolist()), dtype=np.int64, count=len(rows))
    kinds = b.dtype[rows].codes.astype(np.int64)
    groups = np.unique(np.stack([buffers, kinds]), axis=1, return_inverse=True)[1].reshape(-1)
    for g in range(int(groups.max()) + 1 if len(rows) else 0):
        members = np.flatnonzero((groups == g) & (counts > 0))
        if not len(members):
            continue
        dtype = b.dtype[rows[members[0]]]
        assert dtype is not None, "a digestible row has a known dtype"
        size = DTYPE_SIZES[dtype]
        n = counts[members]
        within = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)  # each element's index in its row
        at = np.repeat(b.data_start[rows[members]], n) + within * size
        window = np.frombuffer(b.data_buf[rows[members[0]]], dtype=np.uint8)
        elements = window[at[:, None] + np.arange(size)].view(dtypes.storage_dtype(dtype)).reshape(-1)
        got[np.repeat(off[members], n) + within] = dtypes.to_f64(elements, dtype)
    same = (got == said) | (np.isnan(got) & np.isnan(said))
    out: np.ndarray = segments(off, ~same, np.add, 0.0) == 0
    return out


def _stats_agree(b: RecordBatch, rows: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Each row's stats are the data's (a float stat absent on both sides agrees); a row without stats agrees."""
    floats, counts = b.stats[rows], b.counts[rows]
    none = (counts[:, 0] == NONE) & np.isnan(floats).all(axis=1)
    same = (got[:, :_STATS] == floats) | (np.isnan(got[:, :_STATS]) & np.isnan(floats))
    same_counts = got[:, _STATS:] == np.maximum(counts, 0)
    out: np.ndarray = none | (same.all(axis=1) & same_counts.all(axis=1))
    return out
