"""Canonical text rules shared by both encodings: UTF-8 repair and JSON strings."""

from __future__ import annotations

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def to_text(value: str | bytes) -> str:
    """Text as emitters must see it: invalid UTF-8 becomes U+FFFD.

    Bytes are decoded with Unicode's "maximal subpart" replacement (what
    Python's errors="replace" does); a str with lone surrogates goes through
    the same rule via its surrogatepass encoding.
    """
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")


def json_string(value: str | bytes) -> str:
    """A JSON string literal: only `"`, `\\` and C0 controls are escaped."""
    out = ['"']
    for ch in to_text(value):
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def sort_key(key: str) -> bytes:
    """Meta and config keys are written in the order of their UTF-8 bytes."""
    return to_text(key).encode("utf-8")
