"""A JSON reader that leaves long strings in the file: JSON files of hundreds of MB whose bulk is a few
strings (Polygraphy's base64 arrays) are read with memory for their structure only.

`parse(buf)` returns the document as Python values, except that a string
longer than `LONG` bytes is a `Span`: where it lies in `buf`, decoded only
when asked (`text()`, `bytes_ascii()`). Finding a string's end is one
`bytes.find` per quote, so the bulk is skipped at memory speed. Nesting is
limited (`MAX_DEPTH`), and no length is taken from the input: every span
lies inside `buf`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from orchlog.records import record

LONG = 4096
MAX_DEPTH = 512
_WS = re.compile(rb"[ \t\r\n]*")
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = {
    b"true": True, b"false": False, b"null": None,
    b"NaN": float("nan"), b"Infinity": float("inf"), b"-Infinity": float("-inf"),
}  # fmt: skip


class JSONSpanError(ValueError):
    pass


@record(frozen=True)
class Span:
    """A long JSON string left in the buffer: bytes [start, end) between its quotes."""

    buf: Any
    start: int
    end: int
    escaped: bool  # holds backslash escapes: decoded with the JSON rules

    def __len__(self) -> int:
        return self.end - self.start

    def bytes_ascii(self) -> bytes:
        """The raw bytes between the quotes (a base64 string has no escapes)."""
        return bytes(self.buf[self.start : self.end])

    def text(self) -> str:
        raw = bytes(self.buf[self.start : self.end])
        if not self.escaped:
            return raw.decode("utf-8", "replace")
        try:
            out: str = json.loads(b'"' + raw + b'"')
        except ValueError as exc:
            raise JSONSpanError(f"a string at byte {self.start} is not valid JSON ({exc})") from None
        return out


def _string_end(buf: Any, i: int) -> tuple[int, bool]:
    """The index of the quote that closes the string whose first byte is at i, and whether it has escapes."""
    escaped = False
    while True:
        j = buf.find(b'"', i)
        if j < 0:
            raise JSONSpanError("a string is not closed before the end of the file")
        k = j
        while k > i and buf[k - 1] == 0x5C:  # backslashes before the quote: an odd count escapes it
            k -= 1
        if (j - k) % 2 == 0:
            if not escaped and buf.find(b"\\", i, j) >= 0:
                escaped = True
            return j, escaped
        escaped = True
        i = j + 1


def parse(buf: Any, long: int = LONG) -> Any:
    """The JSON document in buf (bytes, bytearray or mmap) with Spans for long strings."""
    pos = _WS.match(buf, 0).end()  # type: ignore[union-attr]
    # An explicit stack: containers under construction, each with the key awaiting its value.
    stack: list[tuple[Any, str | None]] = []
    root: Any = None
    have_root = False
    n = len(buf)

    def add(value: Any) -> None:
        nonlocal root, have_root
        if not stack:
            if have_root:
                raise JSONSpanError(f"more than one value, the second at byte {pos}")
            root, have_root = value, True
            return
        container, key = stack[-1]
        if isinstance(container, list):
            container.append(value)
        else:
            container[key] = value
            stack[-1] = (container, None)

    while True:
        pos = _WS.match(buf, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            break
        c = buf[pos]
        top = stack[-1] if stack else None
        if top is not None and isinstance(top[0], dict) and top[1] is None:
            # In an object, awaiting a key (or its end).
            if c == 0x7D:  # }
                stack.pop()
                pos += 1
                pos = _after_value(buf, pos, stack)
                continue
            if c != 0x22:
                raise JSONSpanError(f"expected a key at byte {pos}")
            end, escaped = _string_end(buf, pos + 1)
            raw = bytes(buf[pos + 1 : end])
            key = json.loads(b'"' + raw + b'"') if escaped else raw.decode("utf-8", "replace")
            pos = _WS.match(buf, end + 1).end()  # type: ignore[union-attr]
            if pos >= n or buf[pos] != 0x3A:
                raise JSONSpanError(f"expected ':' at byte {pos}")
            stack[-1] = (top[0], key)
            pos += 1
            continue
        if c == 0x7B or c == 0x5B:  # { [
            if len(stack) >= MAX_DEPTH:
                raise JSONSpanError(f"nested deeper than {MAX_DEPTH} levels")
            container: Any = {} if c == 0x7B else []
            add(container)
            stack.append((container, None))
            pos += 1
            if c == 0x5B:
                pos = _WS.match(buf, pos).end()  # type: ignore[union-attr]
                if pos < n and buf[pos] == 0x5D:
                    stack.pop()
                    pos = _after_value(buf, pos + 1, stack)
            continue
        if c == 0x5D and top is not None and isinstance(top[0], list):
            stack.pop()
            pos = _after_value(buf, pos + 1, stack)
            continue
        if c == 0x22:
            end, escaped = _string_end(buf, pos + 1)
            if end - pos - 1 > long:
                add(Span(buf, pos + 1, end, escaped))
            else:
                raw = bytes(buf[pos + 1 : end])
                try:
                    add(json.loads(b'"' + raw + b'"') if escaped else raw.decode("utf-8", "replace"))
                except ValueError as exc:
                    raise JSONSpanError(f"a string at byte {pos} is not valid JSON ({exc})") from None
            pos = _after_value(buf, end + 1, stack)
            continue
        m = _NUMBER.match(buf, pos)
        if m:
            text = m.group()
            add(float(text) if any(ch in text for ch in b".eE") else int(text))
            pos = _after_value(buf, m.end(), stack)
            continue
        for lit, value in _LITERALS.items():
            if buf[pos : pos + len(lit)] == lit:
                add(value)
                pos = _after_value(buf, pos + len(lit), stack)
                break
        else:
            raise JSONSpanError(f"unexpected byte 0x{c:02x} at byte {pos}")
    if stack or not have_root:
        raise JSONSpanError("the document ends before its last container closes")
    return root


def _after_value(buf: Any, pos: int, stack: list[tuple[Any, str | None]]) -> int:
    """Past the separator after a value: a comma (when more follows in the container) or nothing."""
    pos = _WS.match(buf, pos).end()  # type: ignore[union-attr]
    if stack and pos < len(buf) and buf[pos] == 0x2C:
        pos += 1
        nxt = _WS.match(buf, pos).end()  # type: ignore[union-attr]
        if nxt < len(buf) and buf[nxt] in (0x7D, 0x5D):
            raise JSONSpanError(f"a trailing comma at byte {pos - 1}")
    return pos
