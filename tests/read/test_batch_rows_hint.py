"""`Trace.batches(rows=N)` on a binary stream: the first batch holds about N records, not a whole window.

The binary reader reads a growing window (64 KiB, then four times more each read, up to 16 MiB) and used to
gather 4,096 records before its first batch whatever was asked; a caller that wants the first few hundred
records (the weight-type peek of every compare, the diagnosis's neighbours) read and decoded 21 MB of each
large trace for them.
"""

from __future__ import annotations

import numpy as np

from orchlog.read.paths import open_trace
from tests.tracegen import emit, record


def _trace(tmp_path, n=6000):
    row = np.arange(896, dtype=np.float32)
    return emit(tmp_path / "t.bin", (record("h", row, token_idx=k) for k in range(n)), mode="full")


def test_a_small_first_batch_reads_a_small_part_of_the_file(tmp_path):
    trace = open_trace(_trace(tmp_path))
    first = next(trace.batches(rows=100))
    assert 100 <= len(first) < 1000
    assert trace.size is not None and trace.bytes_read < trace.size / 4


def test_the_reads_grow_no_further_than_small_batches_need(tmp_path):
    """Past the first reads, the reads of a caller that asked for small batches are sized by the frames seen:
    512 records of 3.6 KB read about 2 MB, not the 5.3 MB of a read four times the last; so are the next."""
    trace = open_trace(_trace(tmp_path))
    assert trace.size is not None
    frame = trace.size / 6000
    batches = trace.batches(rows=512)
    first = next(batches)
    assert 512 <= len(first) <= 1.5 * 512
    assert trace.bytes_read <= 1.5 * 512 * frame
    second = next(batches)
    assert len(second) <= 1.5 * 512
    assert trace.bytes_read <= 3 * 512 * frame


def test_every_record_still_arrives_once_in_order(tmp_path):
    path = _trace(tmp_path)
    for rows in (1, 100, 4096):
        tokens = np.concatenate([b.token_idx for b in open_trace(path).batches(rows=rows)])
        assert tokens.tolist() == list(range(6000)), rows


def test_without_a_hint_the_batches_stay_large(tmp_path):
    sizes = [len(b) for b in open_trace(_trace(tmp_path)).batches()]
    assert sizes[0] >= 4096
