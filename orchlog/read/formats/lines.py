"""Reading JSON-lines files of any flavour: whole-line chunks, line numbers, lenient parsing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from orchlog.read.formats import disk_position, open_forward, read_into
from orchlog.read.trace import Location, Trace

CHUNK_BYTES = 4 << 20
# C's printf spells non-finite floats nan, -nan, inf; legacy writers put them in JSON as is.
_C_NONFINITE = re.compile(rb'(?<![\w".])(-?)(nan|inf(?:inity)?)(?![\w"])', re.IGNORECASE)


def _json_nonfinite(m: re.Match[bytes]) -> bytes:
    if m[2].lower() == b"nan":
        return b"NaN"  # -nan is a NaN all the same
    return m[1] + b"Infinity"


def loads_line(line: bytes) -> Any:
    """One JSON line: orjson for speed, then the standard parser (NaN and Infinity literals),
    then C's `nan`/`inf` spellings; the standard parser's error is the one raised.

    Nesting deeper than orjson's limit (1024) is an error here too, never the standard
    parser's RecursionError."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise json.JSONDecodeError("nested deeper than 1024 levels", exc.doc, exc.pos) from None
    try:
        return _standard_loads(line)
    except json.JSONDecodeError as first:
        fixed = _C_NONFINITE.sub(_json_nonfinite, line)
        if fixed != line:
            try:
                return _standard_loads(fixed)
            except json.JSONDecodeError:
                pass
        raise first


def _standard_loads(line: bytes) -> Any:
    try:
        return json.loads(line.decode("utf-8", errors="replace"))
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None


def read_line_chunks(trace: Trace, first: int = CHUNK_BYTES) -> Iterator[memoryview]:
    """Whole lines of the file, about CHUNK_BYTES at a time; only the last chunk may lack its final newline.
    A caller that wants the first few lines (a peek at a trace's start) asks for a smaller `first` read:
    each read after it is four times larger, up to CHUNK_BYTES.

    The chunks are views of one reused buffer (no allocation per chunk), valid
    until the next one is asked for. Callers number lines themselves; see
    `cut_unterminated` for the last line.
    """
    buf = bytearray(max(1, min(first, CHUNK_BYTES)))
    view = memoryview(buf)
    held = 0  # bytes at the front of buf: the start of a line not yet complete
    with open_forward(Path(trace.path)) as f:
        while True:
            if held == len(buf):  # a line longer than the buffer: move to one twice the size
                bigger = bytearray(2 * len(buf))
                bigger[:held] = buf
                buf, view = bigger, memoryview(bigger)
            got, cut_short = read_into(f, view[held:])
            trace.bytes_read = disk_position(f)
            end = held + got
            cut = buf.rfind(b"\n", held, end) + 1
            if cut:
                yield view[:cut]
                buf[: end - cut] = buf[cut:end]
                held = end - cut
            else:
                held = end
            if len(buf) < CHUNK_BYTES and held < len(buf):  # after a small first read, larger ones
                bigger = bytearray(min(CHUNK_BYTES, 4 * len(buf)))
                bigger[:held] = buf[:held]
                buf, view = bigger, memoryview(bigger)
            if cut_short is not None:
                trace.report(
                    Location(trace.path, offset=trace.bytes_read),
                    f"compressed stream cut short ({cut_short}); the lines before it were read",
                    fatal=True,
                )
                break
            if not got:
                break
    if held and bytes(buf[:held]).strip():
        yield view[:held]


def cut_unterminated(trace: Trace, chunk: memoryview | bytes, first_line: int) -> memoryview | bytes:
    """The part of a chunk to parse. A chunk that ends without a newline is the file's last line, cut
    short by a crash (or written by a careless writer): when it still holds a whole JSON value it is read,
    with a note; otherwise it is one record cut short, reported once (as the binary stream reports a
    truncated frame) and left out, rather than reported again as malformed JSON."""
    if not len(chunk) or chunk[-1] == 10:  # b"\n"
        return chunk
    text = bytes(chunk)
    start = text.rfind(b"\n") + 1
    where = Location(trace.path, line=first_line + text.count(b"\n"))
    try:
        loads_line(text[start:])
    except json.JSONDecodeError:
        trace.report(where, "truncated record: the file ends inside its last line; every line before it was read", True)
        return chunk[:start]
    trace.report(where, "last line has no newline (truncated write?); read anyway")
    return chunk


def split_lines(chunk: memoryview | bytes, first_line: int) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for the non-blank lines of a chunk."""
    for i, line in enumerate(bytes(chunk).split(b"\n"), start=first_line):
        if line.strip():
            yield i, line


def parse_object(trace: Trace, line: bytes, lineno: int) -> dict[str, Any] | None:
    """The JSON object on one line, or None with the problem reported at file:line."""
    try:
        doc = loads_line(line)
    except json.JSONDecodeError as exc:
        trace.report(
            Location(trace.path, line=lineno), f"malformed JSON ({exc.msg} at column {exc.colno}); line skipped"
        )
        return None
    if not isinstance(doc, dict):
        trace.report(Location(trace.path, line=lineno), "line is not a JSON object; skipped")
        return None
    return doc


def numbered_lines(trace: Trace) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its newline) for every line of the file, the last one even when
    unterminated: for text formats that read a line at a time."""
    lineno = 0
    for chunk in read_line_chunks(trace):
        data = bytes(chunk)
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        for line in lines:
            lineno += 1
            yield lineno, line


def json_objects(trace: Trace) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every line that holds a JSON object; the others are reported."""
    first_line = 1
    for chunk in read_line_chunks(trace):
        lines = bytes(cut_unterminated(trace, chunk, first_line)).split(b"\n")
        for lineno, line in enumerate(lines, start=first_line):
            if line.strip():
                doc = parse_object(trace, line, lineno)
                if doc is not None:
                    yield lineno, doc
        first_line += len(lines) - 1
