"""A compare of binary traces lets go of every read window: what it keeps (each token's first failing
pair, with its tensors, for the diagnosis and for dumps) owns its bytes instead of pinning the window
they were read into. Pinned windows made a full-mode compare of 1.75 GB hold 1.9 GB of memory."""

from __future__ import annotations

import gc
import weakref

import numpy as np

import orchlog.read.formats.orchlog_frames as frames
from orchlog.compare import compare
from orchlog.compare.grading.tiers import FAIL
from tests.tracegen import emit, record


def _traces(tmp_path, tokens=40, layers=4):
    rng = np.random.default_rng(1)
    rows = [rng.standard_normal(896).astype(np.float32) for _ in range(tokens * layers)]

    def write(name, offset):
        records = (
            record("l_out", rows[t * layers + layer] + np.float32(offset), token_idx=t, layer=layer)
            for t in range(tokens)
            for layer in range(layers)
        )
        return emit(tmp_path / name, records, mode="full")

    return write("a.bin", 0.0), write("b.bin", 0.5)  # every pair fails: each token keeps its first failure


def test_no_read_window_outlives_the_compare(tmp_path, monkeypatch):
    a, b = _traces(tmp_path)
    windows: list[weakref.ref] = []
    get = frames._Windows.get

    def tracked(self, want):
        chunk = get(self, want)
        windows.append(weakref.ref(chunk.base if chunk.base is not None else chunk))
        return chunk

    monkeypatch.setattr(frames._Windows, "get", tracked)
    report = compare(a, b)
    assert report.findings.pairs == 160 and report.findings.counts[FAIL] == 160
    gc.collect()
    assert windows and all(w() is None for w in windows), "the report keeps read windows alive"
