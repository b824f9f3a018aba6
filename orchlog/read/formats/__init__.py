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


def read_into(f: io.BufferedIOBase, view: memoryview) -> tuple[int, Exception | None]:
    """Like f.readinto(view), but a gzip stream that breaks off (a writer killed mid-file) keeps what came before.

    readinto would raise and lose the bytes it had already placed; reading one decompressed
    piece at a time counts them. Returns the bytes read and the error that stopped them, if any."""
    n = 0
    while n < len(view):
        try:
            got = f.readinto1(view[n:])
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            return n, exc
        if not got:
            break
        n += got
    return n, None


def disk_position(f: io.BufferedIOBase) -> int:
    """Bytes of the file on disk consumed so far (the compressed position for gzip)."""
    raw: io.IOBase | None = getattr(f, "fileobj", None) if isinstance(f, gzip.GzipFile) else f
    try:
        return (raw or f).tell()
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
