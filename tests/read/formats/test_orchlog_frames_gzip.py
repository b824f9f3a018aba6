"""A gzip-compressed binary stream is decoded natively a window at a time (orchlog_frames._Inflated) and reads
exactly as the same stream uncompressed: records, tensors, batches and what is reported, whatever lies between
its frames and wherever its compressed bytes are cut; without ever decompressing it twice."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import numpy as np
import pytest

from orchlog import open_trace
from orchlog.read.batch import RecordBatch
from orchlog.read.formats import Gunzip, orchlog_frames
from tests.read.validate_ways import both_ways
from tests.tracegen import record, write_frames


def _stream(tmp_path, rng: np.random.Generator) -> bytes:
    """Frames of many sizes, some crossing the reader's first windows (64 KiB, then growing), one tensor larger
    than the plain reader's inline bound (1 MiB), and a second run header after them."""
    arrays = [rng.standard_normal(int(rng.choice([1, 7, 300, 4096]))).astype(np.float32) for _ in range(400)]
    arrays.insert(200, rng.standard_normal(3 << 18).astype(np.float32))
    records = [record(f"c{k % 5}", a, token_idx=k // 5, seq=k) for k, a in enumerate(arrays)]
    one_run = write_frames(tmp_path / "plain.bin", records).read_bytes()
    return one_run + one_run  # and its second run header, after the first run's frames


def _pair(tmp_path, data: bytes, cut: int | None = None):
    plain, gz = tmp_path / "t.bin", tmp_path / "t.bin.gz"
    plain.write_bytes(data)
    packed = gzip.compress(data, compresslevel=1, mtime=0)
    gz.write_bytes(packed if cut is None else packed[:cut])
    return plain, gz


def _said(trace) -> list[str]:
    return [f"{d.location.offset}: {d.message} {d.fatal}" for d in trace.diagnostics]


def _row(rec) -> tuple:
    assert rec.location is not None
    raw = rec.raw_bytes()
    return rec.checkpoint, rec.token_idx, rec.seq, rec.location.offset, rec.blake3, None if raw is None else bytes(raw)


def _records(path) -> tuple[list, list[str]]:
    trace = open_trace(path)
    recs = [_row(r) for r in trace]
    return recs, _said(trace)


@pytest.fixture()
def no_second_decompression(monkeypatch):
    """GzipFile seeks back by decompressing again from the start: the reader must never need to."""

    def rewind(self):
        raise AssertionError("the gzip stream was decompressed a second time")

    monkeypatch.setattr(gzip._GzipReader, "_rewind", rewind)


def test_a_gzip_stream_reads_as_its_plain_file(tmp_path, no_second_decompression):
    plain, gz = _pair(tmp_path, _stream(tmp_path, np.random.default_rng(0)))
    assert _records(gz) == _records(plain)
    batches = [b for b in open_trace(gz).batches() if len(b)]
    assert sum(len(b) for b in batches) == 802 and all(isinstance(b, RecordBatch) for b in batches)
    assert [int(o) for b in batches for o in b.offset] == [r[3] for r in _records(plain)[0]]


def test_garbage_between_frames_is_reported_as_in_the_plain_file(tmp_path, no_second_decompression):
    data = _stream(tmp_path, np.random.default_rng(1))
    plain, _ = _pair(tmp_path, data)
    starts = [r[3] for r in _records(plain)[0]]
    for at in sorted((starts[3], starts[199], starts[201], starts[700]), reverse=True):
        data = data[:at] + b"\xc1" * 40 + data[at:]  # never a msgpack byte orchlog writes: unreadable
    plain, gz = _pair(tmp_path, data)
    recs, said = _records(gz)
    assert (recs, said) == _records(plain)
    assert sum("unreadable bytes" in s and "skipped 40 bytes" in s for s in said) == 4


@pytest.mark.parametrize("fraction", [0.05, 0.37, 0.5, 0.93, 0.9999])
def test_a_cut_gzip_stream_keeps_every_frame_before_the_cut_and_says_where(tmp_path, monkeypatch, fraction):
    data = _stream(tmp_path, np.random.default_rng(2))
    packed = gzip.compress(data, compresslevel=1, mtime=0)
    plain, gz = _pair(tmp_path, data, cut=int(len(packed) * fraction))
    recs, said = _records(gz)
    whole = _records(plain)[0]
    assert recs == whole[: len(recs)] and len(recs) < len(whole)
    assert said[-1].endswith("True") and "compressed stream cut short or damaged" in said[-1]
    cut_at = int(said[-1].split(":")[0])
    assert (recs[-1][3] if recs else -1) < cut_at <= whole[len(recs)][3]  # the first frame it could not read
    fast, slow = both_ways(gz, monkeypatch, verify_hashes=True)
    assert str(fast) == str(slow)


def test_a_stream_of_several_gzip_members_padded_with_zeros_reads_as_one(tmp_path, no_second_decompression):
    """As `cat a.gz b.gz` makes it (split anywhere, mid-frame too), with the zeros some writers pad with."""
    data = _stream(tmp_path, np.random.default_rng(3))
    plain, gz = _pair(tmp_path, data)
    cuts = [0, 1000, len(data) // 2 + 7, len(data) - 3, len(data)]
    members = [gzip.compress(data[a:b], mtime=0) for a, b in zip(cuts, cuts[1:])]
    gz.write_bytes(members[0] + members[1] + b"\0" * 512 + members[2] + members[3])
    assert _records(gz) == _records(plain)


def test_damaged_compressed_bytes_keep_the_frames_before_them(tmp_path, monkeypatch, no_second_decompression):
    data = _stream(tmp_path, np.random.default_rng(4))
    plain, gz = _pair(tmp_path, data)
    packed = bytearray(gz.read_bytes())
    packed[len(packed) // 2 : len(packed) // 2 + 64] = bytes(64)
    gz.write_bytes(bytes(packed))
    recs, said = _records(gz)
    whole = _records(plain)[0]
    assert recs == whole[: len(recs)] and 0 < len(recs) < len(whole)
    assert said[-1].endswith("True") and "compressed stream cut short or damaged" in said[-1]
    fast, slow = both_ways(gz, monkeypatch, verify_hashes=True)
    assert str(fast) == str(slow)


def _gzip_of(*parts: bytes, zeros: int = 0) -> bytes:
    """The parts gzipped, then `zeros` zero bytes in the same member, compressed as they come (a gzip bomb's)."""
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    out = [z.compress(p) for p in parts]
    piece = bytes(1 << 20)
    out += [z.compress(piece[: min(len(piece), zeros - k)]) for k in range(0, zeros, len(piece))]
    return b"".join(out) + z.flush()


def test_a_scan_through_a_stream_of_garbage_holds_a_bounded_part_of_it(tmp_path, monkeypatch):
    """Zeros after the frames (30 MB from 30 KB compressed): the scan for the next frame holds at most _KEEP
    of them (here 1 MiB), where holding every byte since the frame it started at would hold them all."""
    monkeypatch.setattr(orchlog_frames._Inflated, "_KEEP", 1 << 20)
    frames = write_frames(tmp_path / "t.bin", [record("c", np.arange(8, dtype=np.float32))]).read_bytes()
    gz = tmp_path / "bomb.bin.gz"
    gz.write_bytes(_gzip_of(frames, zeros=30 << 20))
    tracemalloc.start()
    try:
        recs, said = _records(gz)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [r[0] for r in recs] == ["c"] and "unreadable bytes" in said[-1] and "skipped to the end" in said[-1]
    assert peak < 12 << 20, peak


def test_a_frame_read_past_what_is_held_is_read_again_from_the_start(tmp_path, monkeypatch):
    """A damaged frame whose string claims 3 MiB swallows the frames after it before it turns out unreadable:
    the scan for the next frame starts again one byte into it, which is no longer held (_KEEP made 1 MiB here);
    the stream is then decompressed again from its start, once, and reads as the plain file does."""
    monkeypatch.setattr(orchlog_frames._Inflated, "_KEEP", 1 << 20)
    rng = np.random.default_rng(5)
    one_run = write_frames(
        tmp_path / "r.bin", [record(f"c{k}", rng.standard_normal(4096).astype(np.float32), seq=k) for k in range(300)]
    ).read_bytes()
    at = one_run.index(b"\xaacheckpoint", 10_000) - 1  # a frame's start, some way in
    data = one_run[:at] + b"\x81\xdb" + (3 << 20).to_bytes(4, "big") + one_run[at:]
    plain, gz = _pair(tmp_path, data)
    restarts = []
    restart = Gunzip.restart

    def counted(self):
        restarts.append(1)
        restart(self)

    monkeypatch.setattr(Gunzip, "restart", counted)
    recs, said = _records(gz)
    assert restarts == [1]
    assert (recs, said) == _records(plain)
    assert any("unreadable bytes" in s for s in said) and len(recs) > 250
