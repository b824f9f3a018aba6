"""Reading the binary stream: lazy tensors, truncated tails, garbage in the middle."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from orchlog import SCHEMA_VERSION
from orchlog.encoding.record import encode_record
from orchlog.read.batch import InlineBytes
from orchlog.read.formats import orchlog_frames
from orchlog.read.paths import open_trace
from tests.tracegen import record, write_frames


def _arrays(n=4):
    rng = np.random.default_rng(0)
    return [rng.standard_normal((4, 33)).astype(np.float32) for _ in range(n)]


def test_full_tensors_load_lazily_and_exactly(tmp_path):
    arrays = _arrays()
    path = write_frames(tmp_path / "t.bin", [record(f"c{i}", a, seq=i) for i, a in enumerate(arrays)])
    trace = open_trace(path)
    recs = list(trace)
    assert trace.header is not None
    assert trace.format == "orchlog-binary" and trace.header["orchlog"] == SCHEMA_VERSION
    for rec, arr in zip(recs, arrays):
        assert rec.has_data
        np.testing.assert_array_equal(rec.tensor(), arr)


def test_a_truncated_tail_keeps_every_whole_frame_and_says_where_it_broke(tmp_path):
    arrays = _arrays()
    path = write_frames(tmp_path / "t.bin", [record(f"c{i}", a) for i, a in enumerate(arrays)])
    full = path.read_bytes()
    last = encode_record(record("c3", arrays[3])).frame
    path.write_bytes(full[:-10])
    trace = open_trace(path)
    assert [r.checkpoint for r in trace] == ["c0", "c1", "c2"]
    (diag,) = trace.diagnostics
    assert diag.fatal and diag.location.offset == len(full) - len(last)
    assert "truncated frame" in diag.message


def test_garbage_between_frames_is_skipped_and_reported(tmp_path):
    arrays = _arrays(2)
    frames = [encode_record(record(f"c{i}", a)).frame for i, a in enumerate(arrays)]
    path = write_frames(tmp_path / "t.bin", [])
    path.write_bytes(path.read_bytes() + frames[0] + b"\x00\x01garbage\xff" + frames[1])
    trace = open_trace(path)
    assert [r.checkpoint for r in trace] == ["c0", "c1"]
    assert "unreadable bytes" in trace.diagnostics[0].message


def test_gzipped_streams_read_the_same(tmp_path):
    arrays = _arrays(2)
    path = write_frames(tmp_path / "t.bin", [record(f"c{i}", a) for i, a in enumerate(arrays)])
    gz = tmp_path / "t.bin.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    recs = list(open_trace(gz))
    np.testing.assert_array_equal(recs[1].tensor(), arrays[1])


def test_a_loader_can_fill_a_buffer_of_its_size_instead_of_returning_bytes(tmp_path):
    arrays = _arrays(2)
    recs = list(open_trace(write_frames(tmp_path / "t.bin", [record(f"c{i}", a) for i, a in enumerate(arrays)])))
    loader = recs[1].loader
    assert isinstance(loader, (InlineBytes, orchlog_frames._TensorLoader))  # the in-memory and the file's loader
    room = bytearray(loader.nbytes)
    loader.readinto(memoryview(room))
    raw = recs[1].raw_bytes()
    assert raw is not None and bytes(room) == arrays[1].tobytes() == bytes(raw)


def test_a_large_tensor_cut_short_after_reading_the_frame_is_an_oserror_that_says_where(tmp_path):
    path = write_frames(tmp_path / "t.bin", [record("c0", np.ones(1 << 18, np.float32))])  # 1 MiB: read later
    (rec,) = list(open_trace(path))
    path.write_bytes(path.read_bytes()[:-20])  # the checksum and 8 bytes of the tensor
    with pytest.raises(OSError, match=r"tensor at byte \d+ is cut short"):
        rec.raw_bytes()


def test_a_small_tensor_is_read_with_its_frame_so_a_later_cut_loses_nothing(tmp_path):
    array = _arrays(1)[0]
    path = write_frames(tmp_path / "t.bin", [record("c0", array)])
    (rec,) = list(open_trace(path))
    path.write_bytes(path.read_bytes()[:-8])
    np.testing.assert_array_equal(rec.tensor(), array)


def _mapped_from(data: bytes | memoryview | None) -> str | None:
    """The file whose mapping holds the bytes (/proc/self/maps), or None: memory of the process's own."""
    assert data is not None
    address = np.frombuffer(data, dtype=np.uint8).ctypes.data
    for line in Path("/proc/self/maps").read_text().splitlines():
        span, _perms, _offset, _dev, inode, *name = line.split(maxsplit=5)
        lo, hi = (int(x, 16) for x in span.split("-"))
        if lo <= address < hi:
            return name[0] if name and inode != "0" else None
    return None


def test_large_tensors_are_mapped_from_the_file_not_copied(tmp_path):
    big = np.random.default_rng(1).standard_normal(1 << 19).astype(np.float32)  # 2 MiB
    path = write_frames(tmp_path / "t.bin", [record("small", np.ones(4, np.float32)), record("big", big)])
    small, large = open_trace(path)
    large_raw, small_raw = large.raw_bytes(), small.raw_bytes()
    assert _mapped_from(large_raw) == str(path)
    assert _mapped_from(small_raw) != str(path)
    np.testing.assert_array_equal(large.tensor(), big)
