"""The binary stream: concatenated msgpack maps, header first, tensor bytes lazily loaded.

The decoder here is deliberately small: it reads the metadata of each frame,
notes where the `data` bytes sit and seeks past them, so that opening a
multi-gigabyte trace costs what its metadata costs.
"""

from __future__ import annotations

import builtins
import dataclasses
import io
import mmap
import os
import struct
import sys
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog import bus_error, kernels
from orchlog.kernels import crc32c
from orchlog.read import fields, readahead
from orchlog.read.batch import NONE, InlineBytes, RecordBatch
from orchlog.read.formats import (
    GZIP_ERRORS,
    Format,
    Gunzip,
    disk_position,
    is_gzip,
    open_binary,
    open_forward,
    register,
)
from orchlog.read.formats.orchlog_jsonl import batch_from_columns, keep_header, record_from
from orchlog.read.readahead import MAP_FROM
from orchlog.read.trace import Location, Trace, TraceRecord

HEADER_MARK = b"\xa7orchlog"
CHECKSUM_KEY = "crc32c"  # the frame checksum's key, last in every frame
CHECKSUM_SINCE = 2  # the schema version from which every frame ends with its checksum
_CHECKSUM_TAIL = len(b"\xa6crc32c") + 5  # the key, then a uint32: 0xce and four bytes
RECORD_MARK = b"\xaacheckpoint"
_MAP_STARTS = {0xDE, 0xDF} | set(range(0x80, 0x90))
_RESYNC_CHUNK = 1 << 20
_PIECE = 1 << 20  # gzip streams are read at most this much at a time where a length comes from the input
MAX_DEPTH = 32  # orchlog writes maps two deep (a record, its stats or meta); a header's config a few more


class _Truncated(Exception):
    """The file ended inside a frame."""


class _Garbage(Exception):
    """Bytes that are not a msgpack value of the expected shape."""


class _Decoder:
    """Reads one msgpack value at a time. Counts in the input are never trusted: a length is read
    only when the file holds that many bytes (or, in gzip, piece by piece), and nesting is capped."""

    def __init__(self, f: io.BufferedIOBase, size: int | None) -> None:
        self.f = f
        self.size = size  # file size when known (not for gzip)
        self.depth = 0
        self.checksum_at: int | None = None  # where the frame's checksum key starts, when it has one

    def take(self, n: int) -> bytes:
        if self.size is not None:
            if self.f.tell() + n > self.size:
                raise _Truncated()
            b = self.f.read(n)
        else:
            b = self._take_piecewise(n)
        if len(b) != n:
            raise _Truncated()
        return b

    def _take_piecewise(self, n: int) -> bytes:
        """n bytes of a stream of unknown length, read in pieces, so that a damaged length
        costs the bytes the stream really has, not the ones it claims."""
        if n <= _PIECE:
            return self.f.read(n)
        out = bytearray()
        while len(out) < n:
            piece = self.f.read(min(_PIECE, n - len(out)))
            if not piece:
                break
            out += piece
        return bytes(out)

    def value(self, lazy_bin: bool = False) -> Any:
        t = self.take(1)[0]
        if 0x80 <= t <= 0x9F or t in (0xDC, 0xDD, 0xDE, 0xDF):
            if self.depth >= MAX_DEPTH:
                raise _Garbage(f"values nested deeper than {MAX_DEPTH} levels")
            self.depth += 1
            try:
                return self._container(t)
            finally:
                self.depth -= 1
        return self._scalar(t, lazy_bin)

    def _container(self, t: int) -> Any:
        if t <= 0x8F:
            return self.map(t & 0x0F)
        if t <= 0x9F:
            return self.array(t & 0x0F)
        if t in (0xDC, 0xDD):
            return self.array(int.from_bytes(self.take(2 if t == 0xDC else 4), "big"))
        return self.map(int.from_bytes(self.take(2 if t == 0xDE else 4), "big"))

    def _scalar(self, t: int, lazy_bin: bool) -> Any:
        if t <= 0x7F:
            return t
        if t >= 0xE0:
            return t - 0x100
        if 0xA0 <= t <= 0xBF:
            return self.str(t & 0x1F)
        if t == 0xC0:
            return None
        if t in (0xC2, 0xC3):
            return t == 0xC3
        if t in (0xC4, 0xC5, 0xC6):
            n = int.from_bytes(self.take({0xC4: 1, 0xC5: 2, 0xC6: 4}[t]), "big")
            # Tensors under MAP_FROM are read with their frame (as the native decoder keeps them), so a
            # file cut or rewritten later loses nothing already read; larger ones are loaded on demand, but
            # in a gzip stream (no size), where loading one later means decompressing the stream again.
            if lazy_bin and n >= MAP_FROM and self.size is not None:
                start = self.f.tell()
                # Seeking past the end raises nothing, so check that the bytes are there.
                if self.f.seek(n, 1) != start + n or (self.size is not None and start + n > self.size):
                    raise _Truncated()
                return ("lazy", start, n)
            return self.take(n)
        if t == 0xCA:
            return struct.unpack(">f", self.take(4))[0]
        if t == 0xCB:
            return struct.unpack(">d", self.take(8))[0]
        if 0xCC <= t <= 0xCF:
            return int.from_bytes(self.take(1 << (t - 0xCC)), "big")
        if 0xD0 <= t <= 0xD3:
            return int.from_bytes(self.take(1 << (t - 0xD0)), "big", signed=True)
        if t in (0xD9, 0xDA, 0xDB):
            return self.str(int.from_bytes(self.take(1 << (t - 0xD9)), "big"))
        raise _Garbage(f"byte 0x{t:02x} is not a msgpack type orchlog writes")

    def str(self, n: int) -> str:
        return self.take(n).decode("utf-8", errors="replace")

    def array(self, n: int) -> list[Any] | np.ndarray:
        if n >= 8:
            # Fast path for the common case: all float32 (5 bytes each) or all float64 (9).
            pos = self.f.tell()
            first = self.f.read(1)
            self.f.seek(pos)
            if first in (b"\xca", b"\xcb") and self._holds(pos, n * (5 if first == b"\xca" else 9)):
                width = 5 if first == b"\xca" else 9
                raw = self.f.read(n * width)
                if len(raw) == n * width:
                    grid = np.frombuffer(raw, dtype=np.uint8).reshape(n, width)
                    if (grid[:, 0] == first[0]).all():
                        body = np.ascontiguousarray(grid[:, 1:])
                        with np.errstate(invalid="ignore"):  # widening a signalling NaN is not an error
                            return body.view(">f4" if width == 5 else ">f8").reshape(n).astype(np.float64)
                self.f.seek(pos)
        return [self.value() for _ in range(n)]

    def _holds(self, pos: int, n: int) -> bool:
        """Whether n bytes from pos may be read in one go: the file has them, or (gzip) they are few."""
        return pos + n <= self.size if self.size is not None else n <= _PIECE

    def map(self, n: int) -> dict[builtins.str, Any]:  # builtins: the class's own str() would shadow it
        out: dict[str, Any] = {}
        for _ in range(n):
            at = self.f.tell()
            key = self.value()
            if key == CHECKSUM_KEY and self.depth == 1:
                self.checksum_at = at
            if not isinstance(key, str):
                raise _Garbage("map key is not a string")
            out[key] = self.value(lazy_bin=(key == "data"))
        return out


def _sniff(path: Path, head: bytes) -> bool:
    if not head or head[0] not in _MAP_STARTS:
        return False
    start = 1 if head[0] < 0xDE else (3 if head[0] == 0xDE else 5)
    return head[start:].startswith(HEADER_MARK) or head[start:].startswith(RECORD_MARK)


def _find_next_frame(f: io.BufferedIOBase, start: int) -> int | None:
    """Offset of the next plausible frame start after `start`, or None at EOF."""
    f.seek(start)
    carry = b""
    base = start
    while True:
        chunk = f.read(_RESYNC_CHUNK)
        if not chunk:
            return None
        buf = carry + chunk
        best = None
        for mark in (RECORD_MARK, HEADER_MARK):
            i = buf.find(mark, 1)
            while i != -1:
                for back in (1, 3, 5):
                    j = i - back
                    if j >= 0 and buf[j] in _MAP_STARTS and (back == 1) == (buf[j] < 0xDE):
                        best = j if best is None else min(best, j)
                        break
                else:
                    i = buf.find(mark, i + 1)
                    continue
                break
        if best is not None:
            return base + best
        keep = max(len(RECORD_MARK) + 5, 0)
        carry = buf[-keep:]
        base += len(buf) - len(carry)


def _preadinto(fd: int, offset: int, buffer: memoryview) -> int:
    """Fill buffer from offset; one call moves at most about 2 GiB on Linux. Returns the bytes read."""
    done = 0
    while done < len(buffer):
        got = os.preadv(fd, [buffer[done:]], offset + done)
        if not got:
            break
        done += got
    return done


def _map(f: io.BufferedIOBase, offset: int, length: int) -> memoryview:
    """The bytes [offset, offset + length) of an open file, mapped rather than copied.

    Large tensors and the reader's windows (`_window`) are then read straight
    from the page cache by whatever consumes them, with no copy in between;
    the mapping lives as long as the returned view (and any array made from it).
    Its pages are mapped as they are first read (the kernel maps 16 at a fault), not up front: MAP_POPULATE
    took the 200,000-row compare from 1.07 to 1.21 s (9 runs each, in turn), its page-table work all on the
    thread that mapped, while faults spread it over the threads that read.
    """
    bus_error.guard()
    if kernels.NATIVE:
        # The same mapping, unmapped off the thread that lets go of it (native/python/kernels/mapping.hpp).
        return kernels.map_window(f.fileno(), offset, length).data
    start = offset - offset % mmap.ALLOCATIONGRANULARITY
    mapped = mmap.mmap(f.fileno(), length + offset - start, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ, offset=start)
    return memoryview(mapped)[offset - start :]


class _TensorBytes:
    """Reads tensor bytes out of one stream file through a single handle opened on first use.

    Plain files are read with os.pread, which neither moves a shared file
    position nor needs a lock, so loaders stay cheap and thread-safe (pack
    reads every tensor, and opening the file once per record used to cost
    more than small tensors themselves). A gzip stream can only seek by
    decompressing, so it keeps one handle and moves forward from where the
    last read ended: reading tensors in file order costs one decompression.
    """

    def __init__(self, path: str, gz: bool) -> None:
        self.path = path
        self.gz = gz
        self._file: io.BufferedIOBase | None = None
        self._lock = threading.Lock()

    def read(self, offset: int, length: int) -> memoryview:
        if not self.gz and length >= MAP_FROM:
            with self._lock:
                f = self._open()
            if offset + length <= os.fstat(f.fileno()).st_size:
                return _map(f, offset, length)
        data = memoryview(bytearray(length))
        self.readinto(offset, data)
        return data.toreadonly()

    def _open(self) -> io.BufferedIOBase:
        """The shared handle, opened on first use (call with the lock held)."""
        if self._file is None:
            self._file = open_binary(Path(self.path))
            weakref.finalize(self, self._file.close)
        return self._file

    def readinto(self, offset: int, buffer: memoryview) -> None:
        """Fill buffer with the bytes at offset; OSError when the file ends first."""
        with self._lock:
            f = self._open()
            if self.gz:
                f.seek(offset)
                got = f.readinto(buffer)
        if not self.gz:
            got = _preadinto(f.fileno(), offset, buffer)
        if got != len(buffer):
            raise OSError(f"{self.path}: tensor at byte {offset} is cut short ({got} of {len(buffer)} bytes)")

    def loader(self, offset: int, length: int) -> _TensorLoader:
        return _TensorLoader(self, offset, length)


class _TensorLoader:
    """A record's loader: call it for the bytes, or `readinto` a buffer of `nbytes` (pack does)."""

    def __init__(self, source: _TensorBytes, offset: int, nbytes: int) -> None:
        self.source, self.offset, self.nbytes = source, offset, nbytes

    def __call__(self) -> memoryview:
        return self.source.read(self.offset, self.nbytes)

    def readinto(self, buffer: memoryview) -> None:
        self.source.readinto(self.offset, buffer)


_END = object()  # what _frame_at returns when there is nothing more to read


def _frame_at(f: io.BufferedIOBase, dec: _Decoder, trace: Trace, tensors: _TensorBytes) -> TraceRecord | object | None:
    """The frame at f's position, by the Python decoder: a record, None (a header, or a frame reported and
    skipped; f is then at the next frame), or _END (the end of the file, or a problem that ends the read)."""
    start = f.tell()
    trace.bytes_read = disk_position(f)
    frame = _next_frame(trace, dec, start)
    if frame is None:
        return _END
    if frame is _SKIPPED:
        return None
    where = Location(trace.path, offset=start)
    check = _FrameCheck(tensors, start, dec.checksum_at, f.tell(), frame.pop(CHECKSUM_KEY, None), _schema(trace))
    if "orchlog" in frame:
        check.version = frame.get("orchlog")
        keep_header(trace, frame, where)
        if (problem := check()) is not None:  # a header is small: its checksum is always checked
            trace.report(where, f"run header: {problem}")
        return None
    rec = _record(trace, frame, where, tensors)
    if rec is not None:
        rec.frame_check = check
    return rec


def _schema(trace: Trace) -> Any:
    """The schema version the frames read now were written in: their run header's."""
    return trace.headers[-1].get("orchlog") if trace.headers else None


def _records(trace: Trace) -> Iterator[TraceRecord]:
    """Every record, one at a time (`orchlog validate`, `show`), each with its frame checksum to check: decoded
    natively where the batches are (gzip streams too: `_Inflated`), by the Python decoder alone without the
    kernels."""
    path = Path(trace.path)
    gz = is_gzip(path)
    tensors = _TensorBytes(trace.path, gz)
    if kernels.NATIVE:
        with open_forward(path) as f:
            yield from _native_records(trace, f, tensors)
        return
    with open_binary(path) as f:
        dec = _Decoder(f, None if gz else path.stat().st_size)
        start = 0
        try:
            while True:
                start = f.tell()
                item = _frame_at(f, dec, trace, tensors)
                if item is _END:
                    break
                if item is not None:
                    yield item  # type: ignore[misc]
        except GZIP_ERRORS as exc:
            _report_cut(trace, start, exc)


def _report_cut(trace: Trace, start: int, exc: Exception) -> None:
    trace.report(
        Location(trace.path, offset=start),
        f"compressed stream cut short or damaged ({exc}); every frame before it was read",
        fatal=True,
    )


_SKIPPED: dict[str, Any] = {}


def _next_frame(trace: Trace, dec: _Decoder, start: int) -> dict[str, Any] | None:
    """The frame at start; _SKIPPED past unreadable bytes (reported); None at the end of the file."""
    f = dec.f
    if not f.read(1):
        return None
    f.seek(start)
    where = Location(trace.path, offset=start)
    dec.checksum_at = None
    try:
        frame = dec.value()
        if not isinstance(frame, dict):
            raise _Garbage("frame is not a map")
        return frame
    except _Truncated:
        into = "" if dec.size is None else f" {dec.size - start} bytes into it"
        trace.report(where, f"truncated frame: the file ends{into}; every frame before it was read", fatal=True)
        return None
    except (_Garbage, UnicodeDecodeError, ValueError) as exc:
        dec.depth = 0
        nxt = _find_next_frame(f, start + 1)
        skipped = "to the end" if nxt is None else f"{nxt - start} bytes"
        trace.report(where, f"unreadable bytes ({exc}); skipped {skipped}")
        if nxt is None:
            return None
        f.seek(nxt)
        return _SKIPPED


def _record(trace: Trace, frame: dict[str, Any], where: Location, tensors: _TensorBytes) -> TraceRecord | None:
    data = frame.pop("data", None)
    try:
        rec = record_from(frame, where)
    except (ValueError, TypeError, KeyError) as exc:
        trace.report(where, f"invalid record ({exc}); frame skipped")
        return None
    if isinstance(data, tuple):
        _, offset, length = data
        rec.loader = tensors.loader(offset, length)
    elif isinstance(data, bytes):
        rec.loader = InlineBytes(data, 0, len(data))
    return rec


class _FrameCheck:
    """A frame's checksum, checked on demand (`orchlog validate --verify-hashes`): CRC-32C over every
    byte of the frame before the checksum's key, the tensor included, against the value the frame
    holds, which must be the frame's last. A frame of a schema that has the checksum and lacks it (or
    whose key is damaged) is a problem too; frames of older schemas have none to check."""

    def __init__(
        self, source: _TensorBytes, start: int, key_at: int | None, end: int, expected: Any, version: Any
    ) -> None:
        self.source, self.start, self.key_at, self.end = source, start, key_at, end
        self.expected, self.version = expected, version

    def __call__(self) -> str | None:
        if self.key_at is None:
            if isinstance(self.version, int) and self.version >= CHECKSUM_SINCE:
                return f"frame has no checksum ({CHECKSUM_KEY}), which every frame of schema {self.version} ends with"
            return None
        if isinstance(self.expected, bool) or not isinstance(self.expected, int) or not 0 <= self.expected < 2**32:
            return f"frame checksum {fields.shown(self.expected)} is not a 32-bit unsigned integer"
        if self.end != self.key_at + _CHECKSUM_TAIL:
            return (
                f"frame checksum is not the frame's last key (a uint32): {self.end - self.key_at} bytes from its key on"
            )
        actual = crc32c(self.source.read(self.start, self.key_at - self.start))
        if actual != self.expected:
            return f"frame checksum (CRC-32C) is {actual:#010x}, the frame says {self.expected:#010x}: the frame is damaged"
        return None


class _FrameReadAgain:
    """The checksum of a frame the native decoder did not find it in (none, another form, or after a tensor
    read past its window), checked by reading the frame again with the Python decoder, which says what is
    wrong with it in _FrameCheck's words."""

    def __init__(self, source: _TensorBytes, start: int, version: Any) -> None:
        self.source, self.start, self.version = source, start, version

    def __call__(self) -> str | None:
        with open_binary(Path(self.source.path)) as f:
            dec = _Decoder(f, os.fstat(f.fileno()).st_size)
            f.seek(self.start)
            try:
                frame = dec.value()
            except (_Truncated, _Garbage, UnicodeDecodeError, ValueError) as exc:
                return f"frame unreadable when read again for its checksum ({str(exc) or 'the file ends inside it'})"
            if not isinstance(frame, dict):
                return "frame is no longer a map when read again for its checksum"
            expected = frame.get(CHECKSUM_KEY)
            return _FrameCheck(self.source, self.start, dec.checksum_at, f.tell(), expected, self.version)()


class _WindowChecks:
    """The frame checksums of a decoded window's rows (a RecordBatch's `frame_checks`): `sound()` checks
    every one the native decoder found, a window at a time, and `check_of(i)` is row i's check as its record
    carries it, which says what is wrong where `sound()` did not find the checksum right."""

    def __init__(
        self,
        chunk: np.ndarray,
        base: int,
        source: _TensorBytes,
        offsets: np.ndarray,
        cols: dict[str, Any],
        version: Any,
    ) -> None:
        kept = np.searchsorted(cols["offset"], offsets)  # the rows _frames_batch kept, by their offsets
        self.chunk, self.base, self.source, self.version = chunk, base, source, version
        self.start, self.key_at, self.expected = offsets, cols["check_at"][kept], cols["check"][kept]

    def sound(self) -> np.ndarray:
        """Per row: the frame's checksum was found in the window, and CRC-32C over the frame before it agrees."""
        ok = np.zeros(len(self.start), dtype=bool)
        starts, ends = (self.start - self.base).tolist(), (self.key_at - self.base).tolist()
        for i, (start, end, expected) in enumerate(zip(starts, ends, self.expected.tolist())):
            if 0 <= start <= end <= len(self.chunk):  # a key_at of -1 (not found in the window) falls out too
                ok[i] = crc32c(self.chunk[start:end]) == expected
        return ok

    def check_of(self, i: int) -> _FrameCheck | _FrameReadAgain:
        start, key_at = int(self.start[i]), int(self.key_at[i])
        if key_at < 0:
            return _FrameReadAgain(self.source, start, self.version)
        return _FrameCheck(self.source, start, key_at, key_at + _CHECKSUM_TAIL, int(self.expected[i]), self.version)


WINDOW = 32 << 20  # the most bytes the binary reader maps (or reads) and decodes at a time
_MAP_READS_FROM = MAP_FROM  # reads of at least this many bytes map the file instead of copying it
_AFTER_SKIP = 64 << 10  # the read after skipping a large tensor: the next frame is likely large too
_BATCH_ROWS = 4096  # small batches (frames of large tensors) are gathered up to this many rows


def _frames_batch(
    cols: dict[str, Any], chunk: np.ndarray, base: int, trace: Trace, tensors: _TensorBytes, inline_max: int
) -> RecordBatch:
    """A RecordBatch from decode_frames' columns; tensors under inline_max bytes stay in `chunk`, larger ones
    get loaders."""
    n = int(cols["n"])
    meta = np.full(n, None, dtype=object)
    bad = []
    for row, start, end in cols["meta_spans"].reshape(-1, 3).tolist():
        try:
            meta[row] = fields.meta(_Decoder(io.BytesIO(chunk[start:end].tobytes()), end - start).value())
        except (ValueError, _Garbage, _Truncated) as exc:
            bad.append(row)
            trace.report(
                Location(trace.path, offset=int(cols["offset"][row])), f"invalid record (meta: {exc}); frame skipped"
            )
    data_pos, data_len = cols["data_pos"], cols["data_len"]
    inline = (data_len >= 0) & (data_len < inline_max)
    loader = np.full(n, None, dtype=object)
    for row in np.flatnonzero(data_len >= inline_max).tolist():
        loader[row] = tensors.loader(int(data_pos[row]), int(data_len[row]))
    data_buf = np.full(n, None, dtype=object)
    holder = np.empty(1, dtype=object)
    holder[0] = chunk
    data_buf[inline] = holder
    batch = dataclasses.replace(
        batch_from_columns(cols, trace.path),
        meta=meta,
        line=np.full(n, NONE, dtype=np.int64),
        offset=cols["offset"],
        loader=loader,
        data_buf=data_buf,
        data_start=np.where(inline, data_pos - base, 0),
        data_len=np.where(inline, data_len, NONE),
    )
    return batch.take(np.setdiff1d(np.arange(n), bad)) if bad else batch


class _Gather:
    """Batches on their way out: tiny ones (a frame or two of large tensors each) are joined up first."""

    def __init__(self) -> None:
        self.parts: list[RecordBatch] = []
        self.records: list[TraceRecord] = []
        self.rows = 0

    def add(self, batch: RecordBatch) -> None:
        self._flush_records()
        self.parts.append(batch)
        self.rows += len(batch)

    def add_record(self, rec: TraceRecord) -> None:
        self.records.append(rec)
        self.rows += 1

    def _flush_records(self) -> None:
        if self.records:
            self.parts.append(RecordBatch.from_records(self.records))
            self.records = []

    def take(self) -> RecordBatch | None:
        self._flush_records()
        batch = RecordBatch.concat(self.parts) if self.parts else None
        self.parts, self.rows = [], 0
        return batch


class _Windows:
    """Buffers for the reads that copy (a file that cannot be mapped), handed out again once nothing refers
    to them: a fresh array per window made the kernel zero its pages before every read.

    A batch keeps its window alive through its rows' `data_buf` (and every view or loader made from it
    holds a reference in turn), so a buffer whose only references are this pool's is free to reuse."""

    def __init__(self, keep: int = 6) -> None:
        self.keep = keep
        self.pool: list[np.ndarray] = []

    def get(self, want: int) -> np.ndarray:
        if want > WINDOW or want < WINDOW // 4:  # the first small reads, a frame larger than a window
            return np.empty(want, dtype=np.uint8)
        for buf in self.pool:
            if sys.getrefcount(buf) <= 3:  # the pool's list, this loop's name and the call's argument
                return buf[:want]
        buf = np.empty(WINDOW, dtype=np.uint8)
        if len(self.pool) < self.keep:
            self.pool.append(buf)
        return buf[:want]


def _window(f: io.BufferedIOBase, pos: int, want: int, windows: _Windows) -> np.ndarray:
    """The file's bytes [pos, pos + want), or fewer where it ends first. A large read maps them from the page
    cache: no copy, and no fresh memory for the kernel to clear (on a VM, the first touch of a copy's pages
    cost a fifth of a full-mode compare's CPU), which lets a window be twice as large as a pooled copy could
    be for the same cost. A small read, or a file that cannot be mapped, is copied into a pooled buffer.

    A mapping shows the file as it is when its pages are read: a trace appended to meanwhile is read as
    before, while one cut shorter by another process during the read raises SIGBUS, as in any program that
    maps its input (the `orchlog` command then says so in one line and exits 2: `bus_error`). The size is
    checked after mapping, so a cut already made is read the safe way."""
    fd = f.fileno()
    if want >= _MAP_READS_FROM:
        try:
            mapped = _map(f, pos, want)
            if os.fstat(fd).st_size >= pos + want:
                return np.frombuffer(mapped, dtype=np.uint8)
        except (OSError, ValueError):  # a file system without mmap, or out of address space
            pass
    chunk = windows.get(want)
    return chunk[: _preadinto(fd, pos, chunk.data)]


def _grown(read_size: int, decoded: int, frames: int, rows_to_go: int | None) -> int:
    """The read after one of `read_size` bytes whose `frames` frames took `decoded` bytes: four times as
    much, up to a window; for a caller that asked for small batches, no more than the rows still to go take
    at that size (and a quarter). A peek at a trace's first 512 records of 4.4 KB read 5.3 MB, now 2.3, and
    the diagnosis's second read stops nearer its last record (gather: 13 to 11 ms at 50,000 rows)."""
    grown = min(WINDOW, 4 * read_size)
    if not frames or rows_to_go is None:
        return grown
    return max(_AFTER_SKIP, min(grown, (decoded // frames) * rows_to_go * 5 // 4))


_FLUSH = object()  # what _native_items yields where the walk's reader hands on what it gathered


class _FileWindows:
    """The windows of a regular file the native reader decodes: mapped or copied (`_window`), or taken from
    the read-ahead thread where one read them first."""

    inline_max = MAP_FROM  # larger tensors are left where they are, and loaded (mapped) when asked for

    def __init__(self, f: io.BufferedIOBase, sized: bool) -> None:
        self.file, self.fd, self.windows = f, f.fileno(), _Windows()
        self.ahead = None if sized else readahead.claim(self.fd)  # a peek at the first records leaves it

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def decoded(self, pos: int, want: int, trail: int) -> tuple[np.ndarray, dict[str, Any], bool]:
        """(the window at pos, its frames' columns, whether the read-ahead gave it: then as large as it read)."""
        if self.ahead is not None and (taken := self.ahead(pos, trail)) is not None:
            chunk, got, cols = taken
            return chunk[:got], cols, True
        chunk = _window(self.file, pos, want, self.windows)
        return chunk, kernels.decode_frames(chunk, pos, MAP_FROM, trail), False

    def position(self, pos: int) -> int:
        """How far into the file on disk reading `pos` is (Trace.bytes_read)."""
        return min(pos, self.size())


class _Inflated:
    """A gzip stream's decompressed bytes, read forward once, as the native reader's windows and as the file
    the Python decoder reads its frames from. The bytes from the last window's start on stay in memory, so a
    window may start again inside the one before (a frame that ran past it) and the Python decoder may seek
    back within a frame, where GzipFile would decompress again from the start of the stream."""

    inline_max = 1 << 31  # every tensor under 2 GiB stays in its window: reading one back means decompressing
    _GROW = 1 << 20  # the Python decoder's reads past what is held take at least this much more
    _KEEP = 64 << 20  # the most the Python decoder's reads hold behind them (a scan through garbage goes on)

    def __init__(self, gunzip: Gunzip) -> None:
        self.gunzip = gunzip
        self.held = np.empty(0, dtype=np.uint8)  # the stream's bytes [start, start + len(held))
        self.start = self.at = 0  # at: the position of the file the Python decoder reads
        self.end: int | None = None  # the stream's length, once it has been read to its end
        self.error: Exception | None = None  # what ended it early: a damaged or cut stream

    def size(self) -> int:
        return self.end if self.end is not None else _UNBOUNDED

    def _hold(self, upto: int, grow: int = 0) -> None:
        """Hold the bytes up to `upto` (and `grow` more), fewer where the stream ends."""
        have = self.start + len(self.held)
        if upto <= have or self.end is not None:
            return
        wanted = max(upto, have + grow) - have
        grown = np.empty(len(self.held) + wanted, dtype=np.uint8)
        grown[: len(self.held)] = self.held
        got, exc = self.gunzip.readinto(grown[len(self.held) :].data)
        if got < wanted:
            self.end, self.error = have + got, exc
        self.held = grown[: len(self.held) + got]

    def decoded(self, pos: int, want: int, trail: int) -> tuple[np.ndarray, dict[str, Any], bool]:
        """The window [pos, pos + want) (fewer bytes where the stream ends) and its frames' columns; the bytes
        before pos are let go."""
        self._forward_to(pos)
        self._hold(pos + want)
        chunk = self.held[:want]
        return chunk, kernels.decode_frames(chunk, pos, self.inline_max, trail), False

    def _forward_to(self, pos: int) -> None:
        """Hold the stream from pos on (pos not before what is held): what lies before it is let go."""
        if pos < self.start:
            raise ValueError(f"a gzip stream is read forward: {pos} is before {self.start}")
        have = self.start + len(self.held)
        self.held = self.held[pos - self.start :] if pos < have else np.empty(0, dtype=np.uint8)
        if pos > have and self.end is None:  # past a tensor left unread: its bytes go by undecoded
            scratch = np.empty(min(pos - have, WINDOW), dtype=np.uint8)
            while have < pos and (got := self.gunzip.readinto(scratch[: pos - have].data)[0]):
                have += got
        self.start = pos

    def position(self, pos: int) -> int:
        del pos  # the compressed bytes read so far
        return disk_position(self.gunzip)

    # The file the Python decoder reads.
    def tell(self) -> int:
        return self.at

    def seek(self, pos: int) -> int:
        if pos < self.start:  # before what is held (a frame read past _KEEP, then read again): as GzipFile does
            self.gunzip.restart()
            self.held, self.start, self.end, self.error = np.empty(0, dtype=np.uint8), 0, None, None
            self._forward_to(pos)
        self.at = pos
        return pos

    def read(self, n: int) -> bytes:
        if self.at - self.start > self._KEEP:  # let go of what lies far behind: a scan of a stream of garbage
            keep = self.at - self._GROW  # (a gzip bomb's zeros) must not hold it all
            self.held, self.start = self.held[keep - self.start :].copy(), keep
        self._hold(self.at + n, grow=min(max(self._GROW, len(self.held)), self._KEEP))
        out = self.held[self.at - self.start : self.at - self.start + n].tobytes()
        self.at += len(out)
        if len(out) < n and self.error is not None:
            raise self.error  # as GzipFile raises it: the frame being read is cut off
        return out


_UNBOUNDED = 1 << 62  # a gzip stream's size until it has been read to its end


def _native_items(trace: Trace, f: io.BufferedIOBase | Gunzip, tensors: _TensorBytes, rows: int) -> Iterator[Any]:
    """Record frames decoded natively a window of the file at a time; the Python decoder takes the frames the
    native one hands back (headers, unusual or broken frames), so both report the same problems the same way.

    Yields, in file order, each window's records as a RecordBatch (with its rows' frame checksums), each record
    the Python decoder read, and _FLUSH where a reader of batches hands on what it has: `rows` gathered, or a
    whole window read."""
    pos, read_size, trail = 0, _AFTER_SKIP, 0
    pending = 0  # records yielded since the last _FLUSH
    batch_rows = min(rows, _BATCH_ROWS)
    sized = rows < _BATCH_ROWS  # small batches asked for: reads sized by them (the walk's stay whole windows)
    src: _FileWindows | _Inflated = _Inflated(f) if isinstance(f, Gunzip) else _FileWindows(f, sized)
    file: Any = src if isinstance(src, _Inflated) else f  # what the Python decoder reads
    dec = _Decoder(file, None if isinstance(src, _Inflated) else src.size())
    while True:
        size = src.size()
        if pos >= size:
            break
        chunk, cols, ahead = src.decoded(pos, min(read_size, size - pos), trail)
        got = len(chunk)
        if ahead:  # as large as the read-ahead read, or as the reader's own would be where it read less
            read_size = max(read_size, got)
        stop, nxt, trail = int(cols["stop"]), int(cols["next"]), int(cols["trail"])
        if cols["n"]:
            batch = _frames_batch(cols, chunk, pos, trace, tensors, src.inline_max)
            if stop == kernels.FRAMES_SKIP and nxt > size:  # the last frame's tensor runs past the end of the file
                batch, stop, nxt = batch.take(np.arange(len(batch) - 1)), kernels.FRAMES_OTHER, int(batch.offset[-1])
                trail = 0
            batch.frame_checks = _WindowChecks(chunk, pos, tensors, batch.offset, cols, _schema(trace))
            pending += len(batch)
            yield batch
        trace.bytes_read = src.position(nxt)
        if pending >= batch_rows or (got >= WINDOW and pending):
            yield _FLUSH
            pending = 0
        grown = _grown(read_size, nxt - pos, int(cols["n"]), batch_rows - pending if sized else None)
        if stop in (kernels.FRAMES_END, kernels.FRAMES_SKIP):
            pos, read_size = nxt, (_AFTER_SKIP if stop == kernels.FRAMES_SKIP else grown)
            continue
        if stop == kernels.FRAMES_MORE and (nxt > pos or got < size - pos):
            # A frame runs past the window: read again from it, in a window large enough to hold it.
            read_size = grown if nxt > pos else 2 * read_size
            pos = nxt
            continue
        # A frame the native decoder does not take (or one cut short by the end of the file): Python's turn.
        file.seek(nxt)
        try:
            item = _frame_at(file, dec, trace, tensors)
        except GZIP_ERRORS as exc:
            _report_cut(trace, nxt, exc)
            return
        if item is _END:
            break
        if item is not None:
            pending += 1
            yield item
        pos = file.tell()
    if isinstance(src, _Inflated) and src.error is not None:  # cut or damaged where a frame ends
        _report_cut(trace, pos, src.error)
    trace.bytes_read = os.fstat(f.fileno()).st_size


def _native_batches(
    trace: Trace, f: io.BufferedIOBase | Gunzip, tensors: _TensorBytes, rows: int
) -> Iterator[RecordBatch]:
    out = _Gather()
    for item in _native_items(trace, f, tensors, rows):
        if item is _FLUSH:
            yield out.take()  # type: ignore[misc]
        elif isinstance(item, TraceRecord):
            out.add_record(item)
        else:
            out.add(item)
    if (last := out.take()) is not None:
        yield last


def _native_records(trace: Trace, f: io.BufferedIOBase | Gunzip, tensors: _TensorBytes) -> Iterator[TraceRecord]:
    """The records of _native_items one at a time, each owning its tensor bytes (as the Python decoder's do) and
    holding its frame checksum to check."""
    for item in _native_items(trace, f, tensors, _BATCH_ROWS):
        if item is _FLUSH:
            continue
        if isinstance(item, TraceRecord):
            yield item
            continue
        for i in range(len(item)):
            yield item.record(i, own=True)


def _runs(trace: Trace, tensors: bool) -> Iterator[RecordBatch | TraceRecord]:
    """What _records yields, a decoded window at a time where the kernels decode it (Trace.runs): small
    tensors come with their frames whatever `tensors` says."""
    path = Path(trace.path)
    if not kernels.NATIVE:
        yield from _records(trace)
        return
    with open_forward(path) as f:
        for item in _native_items(trace, f, _TensorBytes(trace.path, isinstance(f, Gunzip)), _BATCH_ROWS):
            if item is not _FLUSH:
                yield item


def _batches(trace: Trace, rows: int, tensors: bool) -> Iterator[RecordBatch]:
    del tensors  # small tensors come with the frames they lie in; large ones are mapped when asked for
    path = Path(trace.path)
    if not kernels.NATIVE:
        held: list[TraceRecord] = []
        for rec in _records(trace):
            held.append(rec)
            if len(held) == _BATCH_ROWS:
                yield RecordBatch.from_records(held)
                held = []
        if held:
            yield RecordBatch.from_records(held)
        return
    with open_forward(path) as f:  # a regular file, opened without blocking
        yield from _native_batches(trace, f, _TensorBytes(trace.path, isinstance(f, Gunzip)), rows)


def open_frames(path: Path) -> Trace:
    # Batches (compare, pack) and records one by one (validate, show) come from the same decoders; records
    # also carry their frame checksum to check.
    return Trace(str(path), "orchlog-binary", _records, batches=_batches, runs=_runs)


register(Format("orchlog-binary", _sniff, open_frames, priority=10))
