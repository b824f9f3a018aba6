"""readahead: a trace read through windows read ahead is read exactly as without them, problems included;
the windows are used where they fit, and anything that is not a binary trace is left alone."""

from __future__ import annotations

import ctypes
import gc
import mmap
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from orchlog import kernels, schema_gen
from orchlog.read import readahead
from orchlog.read.formats.orchlog_frames import open_frames
from tests.forked import exit_code
from tests.read.formats.test_orchlog_frames_native import _damaged, _random_trace, _value

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")

SMALL = 4096  # a window of a few frames, so that a trace of a few hundred records takes many
MAPPED, COPIED = 0, 1 << 62  # `map_from`: every window mapped from the page cache, or every one copied
PROBE = 64 << 10  # what the read-ahead reads first of a file, to see whether it is a binary trace


@pytest.fixture(autouse=True)
def _nothing_left_over() -> Iterator[None]:
    readahead.finish()
    yield
    readahead.finish()


def _read(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[str, str, bool]], list[dict[str, object]]]:
    """What the compare's walk reads of a trace: its batches (no rows hint), every field of every record."""
    trace = open_frames(path)
    rows = []
    for batch in trace.batches():
        for r in batch.records():
            raw = r.raw_bytes()
            rows.append(
                (
                    *(_value(r, c) for c in schema_gen.COLUMNS),
                    r.dtype, r.shape, r.numel, None if r.values is None else r.values.tobytes(), repr(r.stats),
                    r.blake3, r.meta, str(r.location), r.order, None if raw is None else bytes(raw),
                )
            )  # fmt: skip
    return rows, [(str(d.location), d.message, d.fatal) for d in trace.diagnostics], trace.headers


def _taken(path: Path, ahead: int = 64, map_from: int = COPIED) -> tuple[tuple[object, ...], int]:
    """What the walk reads with `path` read ahead in small windows, and how many it took."""
    readahead.start([path], window=SMALL, ahead=ahead, map_from=map_from)
    reader, _ = next(iter(readahead._started.values()))
    reader.wait()  # all read ahead, as when a compare's imports end
    read = _read(path)
    return read, reader.taken(0)


@pytest.mark.parametrize("map_from", [MAPPED, COPIED], ids=["mapped", "copied"])
@pytest.mark.parametrize("seed", range(4))
def test_a_trace_read_ahead_reads_as_without_and_its_windows_are_taken(tmp_path, seed, map_from):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(seed), 300, large=seed == 3))
    plain = _read(path)
    read, taken = _taken(path, map_from=map_from)
    assert read == plain
    assert taken > 3  # more than the first windows: the reader kept finding the next where it went on


@pytest.mark.parametrize("seed", range(40))
def test_damaged_traces_read_ahead_read_and_report_as_without(tmp_path, seed):
    """Flipped bytes, hostile counts, cut tails, spliced pieces: the reader meets them where it would
    have, reports the same problems, and reads the same records after them."""
    rng = np.random.default_rng(2000 + seed)
    data = _damaged(rng, _random_trace(rng, 120), int(rng.integers(1, 4)))
    path = tmp_path / "t.bin"
    path.write_bytes(data)
    plain = _read(path)
    assert _taken(path, map_from=MAPPED if seed % 2 else COPIED)[0] == plain


def test_windows_stop_where_the_read_ahead_was_told_to_and_the_reader_reads_on(tmp_path):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(7), 300))
    plain = _read(path)
    read, taken = _taken(path, ahead=2)
    assert (read, taken) == (plain, 2)


def test_a_trace_appended_to_after_the_read_ahead_is_read_to_its_new_end(tmp_path):
    path = tmp_path / "t.bin"
    whole = _random_trace(np.random.default_rng(8), 200)
    path.write_bytes(whole[: len(whole) // 2])  # most likely ends inside a frame, as a live trace does
    readahead.start([path], window=SMALL, ahead=64)
    readahead._all[-1].wait()  # it has read what there was
    assert readahead._all[-1].ready(0) > 0
    with path.open("ab") as f:
        f.write(whole[len(whole) // 2 :])
    read = _read(path)
    readahead.finish()
    assert read == _read(path)
    assert len(read[0]) == 200


def test_a_trace_replaced_after_the_read_ahead_is_read_afresh(tmp_path):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(1), 100))
    readahead.start([path], window=SMALL)
    reader, _ = next(iter(readahead._started.values()))
    replacement = tmp_path / "new.bin"
    replacement.write_bytes(_random_trace(np.random.default_rng(2), 100))
    os.replace(replacement, path)  # another file under the same name: another inode
    read = _read(path)
    assert reader.taken(0) == 0
    readahead.finish()
    assert read == _read(path)


def test_what_is_not_a_binary_trace_is_not_read_ahead(tmp_path):
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"checkpoint": "x"}\n' * 1000)
    garbage = tmp_path / "g.bin"
    garbage.write_bytes(bytes(range(256)) * 100)
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    readahead.start([jsonl, garbage, empty, tmp_path, fifo, tmp_path / "missing.bin"], window=SMALL)
    reader = readahead._all[-1]  # of the regular files only: the rest are not even opened
    reader.wait()
    assert [reader.ready(i) for i in range(3)] == [0, 0, 0]
    with pytest.raises(IndexError):
        reader.ready(3)


def test_a_trace_given_twice_is_read_ahead_once(tmp_path):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(5), 300))
    readahead.start([path, tmp_path / "." / "t.bin"], window=SMALL, ahead=3)
    reader = readahead._all[-1]
    reader.wait()
    assert reader.ready(0) == 3 and len(readahead._started) == 1
    with pytest.raises(IndexError):
        reader.ready(1)


def test_a_reader_that_asks_for_small_batches_leaves_the_read_ahead_to_the_walk(tmp_path):
    """The compare's first look at a trace (a few hundred records) must not take what the walk will use."""
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(3), 300))
    readahead.start([path], window=SMALL, ahead=64)
    reader, _ = next(iter(readahead._started.values()))
    reader.wait()
    next(iter(open_frames(path).batches(rows=16)))
    assert reader.taken(0) == 0
    _read(path)
    assert reader.taken(0) > 0


def test_finish_frees_what_no_reader_took(tmp_path):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(4), 300))
    readahead.start([path], window=SMALL, ahead=5)
    reader = readahead._all[-1]
    reader.wait()
    assert reader.ready(0) == 5
    readahead.finish()
    assert readahead._all == [] and readahead._started == {} and readahead.claim(0) is None


def _cached_pages(path: Path) -> int:
    """How many of the file's pages the page cache holds (mincore(2), which starts no read)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    size = path.stat().st_size
    fd = os.open(path, os.O_RDONLY)
    try:
        at = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert at not in (None, ctypes.c_void_p(-1).value), os.strerror(ctypes.get_errno())
        pages = (ctypes.c_ubyte * ((size + mmap.PAGESIZE - 1) // mmap.PAGESIZE))()
        ok = libc.mincore(ctypes.c_void_p(at), ctypes.c_size_t(size), pages)
        libc.munmap(ctypes.c_void_p(at), ctypes.c_size_t(size))
        assert ok == 0, os.strerror(ctypes.get_errno())
        return sum(p & 1 for p in pages)
    finally:
        os.close(fd)


def _evict(path: Path) -> bool:
    """Drop the file's pages from the page cache; whether they are gone (tmpfs, for one, keeps them)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return _cached_pages(path) == 0


@pytest.mark.parametrize("map_from", [MAPPED, COPIED], ids=["mapped", "copied"])
def test_a_trace_not_in_the_page_cache_is_left_to_the_reader(tmp_path, map_from):
    """Read from disk, the first windows cost the command more than they saved: only cached bytes are
    read ahead (mapped or copied), and the thread never waits for a disk."""
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(6), 300))
    plain = _read(path)
    assert _cached_pages(path) > 0
    if not _evict(path):
        pytest.skip("this file system keeps the file in the page cache")
    readahead.start([path], window=SMALL, ahead=64, map_from=map_from)
    reader = readahead._all[-1]
    reader.wait()
    assert reader.ready(0) == 0
    assert _read(path) == plain


def test_a_process_forked_while_reading_ahead_lets_go_of_it_and_the_parent_reads_on(tmp_path):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(10), 1000))
    readahead.start([path], window=512, ahead=1 << 20)  # thousands of windows: still reading at the fork
    reader = readahead._all[-1]
    pid = os.fork()
    if pid == 0:  # the child: its registry is empty; dropping its copy must neither hang nor abort
        code = 1
        try:
            code = 0 if not readahead._all and readahead.claim(0) is None else 3
            del reader
            gc.collect()
        finally:
            os._exit(code)
    assert exit_code(pid, "the forked child hung letting go of the read-ahead") == 0
    reader.wait()
    assert reader.ready(0) > 0  # the parent's is untouched


def _windows_taken(monkeypatch) -> list[int]:
    """Where each window the reader takes from the read-ahead ends (filled in as the reader takes them)."""
    ends: list[int] = []
    claim = readahead.claim

    def claim_and_count(fd: int):
        take = claim(fd)
        if take is None:
            return None

        def counted(pos: int, trail: int):
            window = take(pos, trail)
            if window is not None:
                ends.append(pos + window[1])
            return window

        return counted

    monkeypatch.setattr(readahead, "claim", claim_and_count)
    return ends


def test_a_mapped_window_stops_where_the_page_cache_stops_holding_the_trace(tmp_path, monkeypatch):
    """Of a trace whose first pages alone are cached, the mapped read-ahead takes those pages only (the
    decoder never faults in a page from disk), and the reader reads the rest for itself. The read-ahead's
    first look at a file (64 KiB, read without waiting) may start the kernel reading that much from disk in
    the background, so a window may reach that far, never further."""
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(11), 1000))
    plain = _read(path)
    if not _evict(path):
        pytest.skip("this file system keeps the file in the page cache")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead of the kernel's own beyond what is read
        os.pread(fd, 4 * mmap.PAGESIZE, 0)
    finally:
        os.close(fd)
    cached = max(_cached_pages(path) * mmap.PAGESIZE, PROBE)
    assert 4 * cached < path.stat().st_size
    got = _windows_taken(monkeypatch)
    readahead.start([path], window=path.stat().st_size, ahead=4, map_from=MAPPED)
    readahead._all[-1].wait()
    assert _read(path) == plain
    assert got and max(got) <= cached  # no window read ahead past the cached pages


def test_a_mapped_window_reads_across_the_odd_page_the_page_cache_dropped(tmp_path, monkeypatch):
    """A VM's memory reclaim drops single pages of a trace it has just read (one in a few hundred within
    seconds on this project's machine). The read-ahead maps across such holes (asking the kernel for them)
    instead of stopping at the first one, which had left the walk to read all but the first window itself."""
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(12), 1000))
    plain = _read(path)
    size = path.stat().st_size
    pages = size // mmap.PAGESIZE
    if not _evict(path):  # what was written may sit in large folios, which a page's drop leaves whole
        pytest.skip("this file system keeps the file in the page cache")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.pread(fd, size, 0)
        for page in range(3, pages, 20):
            os.posix_fadvise(fd, page * mmap.PAGESIZE, mmap.PAGESIZE, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    if _cached_pages(path) >= pages:
        pytest.skip("no single page of the file could be dropped from the page cache")
    got = _windows_taken(monkeypatch)
    readahead.start([path], window=size, ahead=4, map_from=MAPPED)
    readahead._all[-1].wait()
    assert _read(path) == plain
    assert got and max(got) == size  # one window, the whole trace


@pytest.mark.parametrize("map_from", [MAPPED, COPIED], ids=["mapped", "copied"])
def test_a_mapped_window_is_handed_out_read_only_and_a_copy_writable(tmp_path, map_from, monkeypatch):
    """The pages of a mapped window are mapped read-only: an array over them that said it was writable would
    let a write crash the process (the reader's own mapped windows are read-only too). The reader's own
    reads (where the read-ahead has no window) map or copy as the read-ahead does."""
    monkeypatch.setattr("orchlog.read.formats.orchlog_frames._MAP_READS_FROM", max(map_from, 1))
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(5), 300))
    readahead.start([path], window=SMALL, ahead=64, map_from=map_from)
    reader, _ = next(iter(readahead._started.values()))
    reader.wait()
    batches = list(open_frames(path).batches())
    chunks = [c for batch in batches if batch.data_buf is not None for c in batch.data_buf if c is not None]
    assert reader.taken(0) > 3 and chunks
    assert all(c.flags.writeable == (map_from == COPIED) for c in chunks)
