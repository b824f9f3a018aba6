"""Reading JSON-lines files of any flavour: whole-line chunks, line numbers, lenient parsing."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import orjson

from orchlog.formats import disk_position, open_binary
from orchlog.trace import Location, Trace

CHUNK_BYTES = 4 << 20
# C's printf spells non-finite floats nan, -nan, inf; legacy writers put them in JSON as is.
_C_NONFINITE = re.compile(rb'(?<![\w".])(-?)(nan|inf(?:inity)?)(?![\w"])', re.IGNORECASE)


def loads_line(line: bytes) -> Any:
    """One JSON line: orjson for speed, then the standard parser (NaN and Infinity literals),
    then C's `nan`/`inf` spellings; the standard parser's error is the one raised."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(line)
    except json.JSONDecodeError as first:
        fixed = _C_NONFINITE.sub(lambda m: b"-Infinity" if m[1] and m[2].lower() != b"nan" else
                                 (b"Infinity" if m[2].lower() != b"nan" else b"NaN"), line)
        if fixed != line:
            try:
                return json.loads(fixed)
            except json.JSONDecodeError:
                pass
        raise first
    except UnicodeDecodeError:
        return json.loads(line.decode("utf-8", errors="replace"))


def read_line_chunks(trace: Trace) -> Iterator[tuple[bytes, int]]:
    """Whole lines of the file in chunks of about CHUNK_BYTES, with the number of each chunk's first line.

    A last line without its newline (a write cut short) is reported and still yielded.
    """
    with open_binary(Path(trace.path)) as f:
        lineno, carry = 1, b""
        while True:
            data = f.read(CHUNK_BYTES)
            trace.bytes_read = disk_position(f)
            if not data:
                break
            buf = carry + data if carry else data
            cut = buf.rfind(b"\n") + 1
            if cut == 0:  # a line longer than a chunk: keep reading
                carry = buf
                continue
            carry = buf[cut:]
            yield buf[:cut], lineno
            lineno += buf.count(b"\n", 0, cut)
        if carry.strip():
            trace.report(Location(trace.path, line=lineno), "last line has no newline (truncated write?); read anyway")
            yield carry, lineno


def split_lines(chunk: bytes, first_line: int) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for the non-blank lines of a chunk."""
    for i, line in enumerate(chunk.split(b"\n"), start=first_line):
        if line.strip():
            yield i, line


def parse_object(trace: Trace, line: bytes, lineno: int) -> dict[str, Any] | None:
    """The JSON object on one line, or None with the problem reported at file:line."""
    try:
        doc = loads_line(line)
    except json.JSONDecodeError as exc:
        trace.report(Location(trace.path, line=lineno), f"malformed JSON ({exc.msg} at column {exc.colno}); line skipped")
        return None
    if not isinstance(doc, dict):
        trace.report(Location(trace.path, line=lineno), "line is not a JSON object; skipped")
        return None
    return doc


def json_objects(trace: Trace) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every line that holds a JSON object; the others are reported."""
    for chunk, first_line in read_line_chunks(trace):
        for lineno, line in split_lines(chunk, first_line):
            doc = parse_object(trace, line, lineno)
            if doc is not None:
                yield lineno, doc
