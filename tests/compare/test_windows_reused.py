"""A compare of binary traces lets go of every read window: what it keeps (each token's first failing
pair, with its tensors, for the diagnosis and for dumps) owns its bytes instead of pinning the window
they were read into. Pinned windows made a full-mode compare of 1.75 GB hold 1.9 GB of memory."""

from __future__ import annotations

import gc
import weakref

import orchlog.read.formats.orchlog_frames as frames
from orchlog.compare import compare
from orchlog.compare.grading.tiers import FAIL
from tests.compare.runs import offset_pair


def test_no_read_window_outlives_the_compare(tmp_path, monkeypatch):
    a, b = offset_pair(tmp_path, 0.5, tokens=40, layers=4, width=896)
    windows: list[weakref.ref] = []
    window = frames._window

    def tracked(f, pos, want, pool):
        chunk = window(f, pos, want, pool)
        windows.append(weakref.ref(chunk.base if chunk.base is not None else chunk))
        return chunk

    monkeypatch.setattr(frames, "_window", tracked)
    monkeypatch.setattr(frames, "_MAP_READS_FROM", 4096)  # this small trace's windows are mapped too
    report = compare(a, b)
    assert report.findings.pairs == 160 and report.findings.counts[FAIL] == 160
    gc.collect()
    assert windows and all(w() is None for w in windows), "the report keeps read windows alive"
