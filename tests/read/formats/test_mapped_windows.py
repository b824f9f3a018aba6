"""The binary reader's large reads map the file instead of copying it: the records, problems and batches
are the same either way, a file that cannot be mapped is read by copying, and one cut shorter between its
size being taken and its mapping is read the safe way."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from orchlog import kernels
from orchlog.read.formats import orchlog_frames
from orchlog.read.formats.orchlog_frames import open_frames
from tests.read.formats.test_orchlog_frames_native import _damaged, _random_trace
from tests.read.test_readahead import _read

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")


def _windows_read(path, monkeypatch, *, map_from: int, window: int = 4096):
    """What the compare's walk reads of the trace with reads of at least `map_from` bytes mapped."""
    with monkeypatch.context() as m:
        m.setattr(orchlog_frames, "WINDOW", window)
        m.setattr(orchlog_frames, "_AFTER_SKIP", 512)
        m.setattr(orchlog_frames, "_MAP_READS_FROM", map_from)
        return _read(path)


@pytest.mark.parametrize("seed", range(12))
def test_mapped_and_copied_windows_read_alike(tmp_path, seed, monkeypatch):
    rng = np.random.default_rng(3000 + seed)
    data = _random_trace(rng, 150, large=seed % 3 == 0)
    if seed % 2:
        data = _damaged(rng, data, int(rng.integers(1, 4)))
    path = tmp_path / "t.bin"
    path.write_bytes(data)
    copied = _windows_read(path, monkeypatch, map_from=1 << 60)
    assert _windows_read(path, monkeypatch, map_from=1) == copied
    assert _windows_read(path, monkeypatch, map_from=1, window=1 << 20) == copied


def test_large_reads_are_mapped_by_default(tmp_path, monkeypatch):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(5), 3000))  # about 4 MB: reads grow past MAP_FROM
    maps: list[int] = []
    real = orchlog_frames._map

    def counted(f, offset, length):
        maps.append(length)
        return real(f, offset, length)

    monkeypatch.setattr(orchlog_frames, "_map", counted)
    rows = sum(len(b) for b in open_frames(path).batches())
    assert rows == 3000 and maps and min(maps) >= orchlog_frames._MAP_READS_FROM


def test_a_file_that_cannot_be_mapped_is_copied(tmp_path, monkeypatch):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(6), 200))
    expected = _windows_read(path, monkeypatch, map_from=1 << 60)

    def refuse(f, offset, length):
        raise OSError(19, "No such device")  # what mmap says on a file system that cannot map

    monkeypatch.setattr(orchlog_frames, "_map", refuse)
    assert _windows_read(path, monkeypatch, map_from=1) == expected


def test_a_file_cut_before_its_window_is_mapped_is_read_safely(tmp_path):
    """Reading a mapped page past the end of a file kills the process (SIGBUS): a file found shorter once
    mapped is read by copying instead, and reports where it was cut. A subprocess, so that a regression
    fails this test rather than ending the test run."""
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(7), 400))
    script = textwrap.dedent(
        f"""
        import os
        from orchlog.read.formats import orchlog_frames
        orchlog_frames.WINDOW, orchlog_frames._MAP_READS_FROM = 1 << 16, 1
        real, cut = orchlog_frames._map, []
        def map_then_cut(f, offset, length):
            view = real(f, offset, length)
            if offset > 0 and not cut:  # another process cuts the file at a page half-way into this window
                cut.append((offset + length // 2) // 4096 * 4096)
                os.truncate({str(path)!r}, cut[0])
            return view
        orchlog_frames._map = map_then_cut
        trace = orchlog_frames.open_frames(__import__("pathlib").Path({str(path)!r}))
        rows = [r for b in trace.batches() for r in b.records() if r.raw_bytes() is not None]
        print(len(rows), cut[0], [d.message.split(":")[0] for d in trace.diagnostics])
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the reader died (signal {-done.returncode}): {done.stderr[-2000:]}"
    rows, cut, problems = done.stdout.split(" ", 2)
    assert 0 < int(rows) < 400 and int(cut) > 0 and "truncated frame" in problems
