"""Trace formats, found by content, not by file name.

Each format module calls `register(Format(...))` with a `sniff` that looks
at the first bytes of a file (already decompressed when it is gzip) and an
`open` that returns a `Trace`. `detect` asks them in priority order.
"""

from __future__ import annotations

import gzip
import importlib
import io
import json
import math
import re
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from orchlog.errors import OrchlogError
from orchlog.read.files import open_regular
from orchlog.read.trace import Trace
from orchlog.records import record

HEAD_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"


@record(frozen=True)
class Format:
    name: str
    sniff: Callable[[Path, bytes], bool]  # (path, first bytes, decompressed) -> is it mine?
    open: Callable[[Path], Trace]
    priority: int = 50  # lower asks first; specific formats before permissive ones
    # Files read along with this format's files (metadata.json, dump_tensor_data/*.pt): globs relative to
    # the file's directory; a directory trace reads them only through that file.
    companions: tuple[str, ...] = ()


_FORMATS: list[Format] = []
# Modules that register formats, each with the lowest priority it registers (a test holds them to it), in
# that order: imported on first use, and by `detect` only until a format claims the file, so that opening
# an orchlog trace does not import every other tool's reader (9 ms).
_MODULES = [
    (5, "orchlog.read.formats.parquet"),
    (10, "orchlog.read.formats.orchlog_frames"),
    (20, "orchlog.read.formats.orchlog_jsonl"),
    # Other tools' dumps (docs/formats.md) and the legacy formats.
    (21, "orchlog.read.formats.torch_dumps"),
    (24, "orchlog.read.formats.polygraphy"),
    (25, "orchlog.read.formats.hf_debugger"),
    (26, "orchlog.read.formats.msprobe"),
    (30, "orchlog.read.formats.legacy_checkpoint"),
    (31, "orchlog.read.formats.legacy_trace"),
    (32, "orchlog.read.formats.legacy_logits"),
    (40, "orchlog.read.formats.llama_debug_text"),
    (41, "orchlog.read.formats.numerics_text"),
    (90, "orchlog.read.formats.raw_logits"),
]


def register(fmt: Format) -> None:
    _FORMATS.append(fmt)
    _FORMATS.sort(key=lambda f: f.priority)


def register_records(
    name: str,
    sniff: Callable[[Path, bytes], bool],
    records: Callable[[Trace], Any],
    priority: int = 50,
    companions: tuple[str, ...] = (),
) -> None:
    """Register a format read record by record: its trace is `records(trace)`, an iterator of TraceRecords."""
    register(Format(name, sniff, lambda path: Trace(str(path), name, records), priority, companions))


def _by_priority() -> Iterator[Format]:
    """Every format, lowest priority first (registration order among equals), importing each module only
    when no format of a lower priority is left to ask."""
    asked: set[str] = set()
    for k, (_, module) in enumerate(_MODULES):
        if module not in sys.modules:  # import_module's own check costs more: a directory sniffs every file
            importlib.import_module(module)
        below = _MODULES[k + 1][0] if k + 1 < len(_MODULES) else math.inf
        for fmt in list(_FORMATS):
            if fmt.priority < below and fmt.name not in asked:
                asked.add(fmt.name)
                yield fmt


def formats() -> list[Format]:
    for _, module in _MODULES:
        importlib.import_module(module)
    return list(_FORMATS)


def is_gzip(path: Path) -> bool:
    with open_regular(path) as f:
        return f.read(2) == GZIP_MAGIC


def open_binary(path: Path) -> io.BufferedIOBase:
    """A binary file object (the file, or a GzipFile reading it), transparently gunzipped."""
    f = open_regular(path)
    if f.read(2) == GZIP_MAGIC:
        f.seek(0)
        gz = gzip.GzipFile(fileobj=f, mode="rb")
        # Closing the GzipFile then closes the file, as gzip.open(path) does. (typeshed types myfileobj
        # as FileIO; gzip.open itself stores the buffered file that builtins.open returns there.)
        gz.myfileobj = f  # type: ignore[assignment]
        return gz
    f.seek(0)
    return f


GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)  # a gzip stream cut short or damaged


class Gunzip:
    """A gzip file read once from start to end (`open_forward`): its members decompressed by zlib straight from
    the file a MiB at a time, where GzipFile reads 8 KiB at a time through Python (one 38 MB stream of frames:
    0.42-0.59 s against 0.19 s). The errors are GzipFile's: EOFError for a stream cut short, zlib.error for
    damaged bytes."""

    _PIECE = 1 << 20

    def __init__(self, raw: io.BufferedIOBase) -> None:
        self.raw = raw
        self.d = zlib.decompressobj(31)  # a gzip member: header, deflate, CRC-32 and size checked
        self.pending = b""  # compressed bytes not yet given to the decompressor
        self.done = False

    def readinto(self, out: memoryview) -> tuple[int, Exception | None]:
        """Fill `out` as far as the stream goes: (bytes given, the error that stopped them, if any)."""
        n = 0
        try:
            while n < len(out) and not self.done:
                if self.d.eof:  # the member ended: another may follow, after zeros some writers pad with
                    rest = (self.d.unused_data + self.pending).lstrip(b"\x00")
                    while not rest and (piece := self.raw.read(self._PIECE)):
                        rest = piece.lstrip(b"\x00")
                    if not rest:
                        self.done = True
                        break
                    self.d, self.pending = zlib.decompressobj(31), rest
                data = self.d.unconsumed_tail or self.pending or self.raw.read(self._PIECE)
                self.pending = b""
                if not data:
                    raise EOFError("Compressed file ended before the end-of-stream marker was reached")
                got = self.d.decompress(data, len(out) - n)
                out[n : n + len(got)] = got
                n += len(got)
        except GZIP_ERRORS as exc:
            self.done = True
            return n, exc
        return n, None

    def restart(self) -> None:
        """From the start of the file again: what reading back costs a gzip stream."""
        self.raw.seek(0)
        self.d, self.pending, self.done = zlib.decompressobj(31), b"", False

    def fileno(self) -> int:
        return self.raw.fileno()

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> Gunzip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_forward(path: Path) -> io.BufferedIOBase | Gunzip:
    """The file for a reader that reads it once from start to end: the file itself, or its gzip stream
    decompressed (`Gunzip`; `read_into` reads either)."""
    f = open_regular(path)
    if f.read(2) == GZIP_MAGIC:
        f.seek(0)
        return Gunzip(f)
    f.seek(0)
    return f


def read_into(f: io.BufferedIOBase | Gunzip, view: memoryview) -> tuple[int, Exception | None]:
    """Like f.readinto(view), but a gzip stream that breaks off (a writer killed mid-file) keeps what came before.

    readinto would raise and lose the bytes it had already placed; reading one decompressed
    piece at a time counts them. Returns the bytes read and the error that stopped them, if any."""
    if isinstance(f, Gunzip):
        return f.readinto(view)
    n = 0
    while n < len(view):
        try:
            got = f.readinto1(view[n:])
        except GZIP_ERRORS as exc:
            return n, exc
        if not got:
            break
        n += got
    return n, None


def disk_position(f: io.BufferedIOBase | Gunzip) -> int:
    """Bytes of the file on disk consumed so far (the compressed position for gzip)."""
    if isinstance(f, Gunzip):
        on_disk: Any = f.raw
    else:
        on_disk = (getattr(f, "fileobj", None) if isinstance(f, gzip.GzipFile) else None) or f
    try:
        return int(on_disk.tell())
    except (OSError, ValueError):
        return 0


_KEY = re.compile(rb'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')


def first_object(head: bytes) -> tuple[dict[str, Any] | None, set[str]]:
    """The first JSON object of a file's head and its keys, for sniffing.

    When the first line is not a whole object (a pretty-printed file, or a
    line longer than the head) the object is None and the keys are the
    quoted names followed by a colon near the start.
    """
    body = head.lstrip()
    if not body.startswith(b"{"):
        return None, set()
    line = body.split(b"\n", 1)[0]
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            doc = json.loads(line)
        except (ValueError, RecursionError):
            doc = None
    if isinstance(doc, dict):
        return doc, set(doc)
    return None, {m.decode() for m in _KEY.findall(body[:4096])}


def read_head(path: Path, n: int = HEAD_BYTES) -> bytes:
    try:
        with open_binary(path) as f:
            head = bytearray(n)
            got, _ = read_into(f, memoryview(head))  # a cut-short gzip file is still recognised by its first lines
            return bytes(head[:got])
    except (OSError, EOFError) as exc:
        raise OrchlogError(f"cannot read {path}: {exc}") from None


def detect(path: Path) -> Format:
    """The format of one file, by content; OrchlogError when nothing claims it."""
    head = read_head(path)
    for fmt in _by_priority():
        if fmt.sniff(path, head):
            return fmt
    if not head:
        raise OrchlogError(f"{path} is empty: nothing to read")
    raise OrchlogError(
        f"{path}: not a trace format orchlog knows (orchlog JSONL or binary stream, Parquet, "
        "the legacy checkpoint/trace/logits JSONL, or another tool's dump: docs/formats.md)"
    )
