"""A record kept after its batch owns its tensor bytes, so the window they were read into can be reused.

Binary traces are read a window (16 MiB) at a time, and a batch's small tensors stay in it. A record
kept beyond its batch (the divergence tracker keeps each token's first failing pair, with its tensors,
for the diagnosis) used to keep its whole window alive: over a run, every window at once.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np

from orchlog.read.paths import open_trace
from tests.tracegen import emit, record


def _trace(tmp_path):
    rows = [np.arange(896, dtype=np.float32) * np.float32(k) for k in range(8)]
    return emit(tmp_path / "t.bin", (record("h", r, token_idx=k) for k, r in enumerate(rows)), mode="full"), rows


def _window_of(batch):
    (window,) = {id(b): b for b in batch.data_buf if b is not None}.values()
    base = window.base if isinstance(window, np.ndarray) and window.base is not None else window
    return weakref.ref(base)


def test_an_owned_record_lets_its_window_go(tmp_path):
    path, rows = _trace(tmp_path)
    (batch,) = list(open_trace(path).batches())
    window = _window_of(batch)
    kept = [batch.record(i, own=True) for i in range(len(batch))]
    del batch
    gc.collect()
    assert window() is None, "a kept record still holds the read window"
    for rec, row in zip(kept, rows):
        data = rec.raw_bytes()
        assert data is not None and bytes(data) == row.tobytes()


def test_a_record_not_owned_reads_from_the_window(tmp_path):
    path, rows = _trace(tmp_path)
    (batch,) = list(open_trace(path).batches())
    window = _window_of(batch)
    kept = batch.record(3)
    del batch
    gc.collect()
    assert window() is not None  # the default: no copy, for records used while their batch lives
    data = kept.raw_bytes()
    assert data is not None and bytes(data) == rows[3].tobytes()
