"""A minimal canonical msgpack writer: every value in its smallest form.

msgpack allows several encodings of one value; byte identity across
emitters needs one. The rule is the one msgpack-python follows: the
shortest integer, string and binary forms, str8 allowed, float32 only where
the format asks for it (f32/f16/bf16 values), float64 everywhere else.
"""

from __future__ import annotations

import struct


def nil() -> bytes:
    return b"\xc0"


def boolean(value: bool) -> bytes:
    return b"\xc3" if value else b"\xc2"


def integer(value: int) -> bytes:
    if 0 <= value <= 0x7F:
        return bytes([value])
    if -32 <= value < 0:
        return struct.pack(">b", value)
    if value >= 0:
        if value <= 0xFF:
            return b"\xcc" + struct.pack(">B", value)
        if value <= 0xFFFF:
            return b"\xcd" + struct.pack(">H", value)
        if value <= 0xFFFFFFFF:
            return b"\xce" + struct.pack(">I", value)
        return b"\xcf" + struct.pack(">Q", value)
    if value >= -0x80:
        return b"\xd0" + struct.pack(">b", value)
    if value >= -0x8000:
        return b"\xd1" + struct.pack(">h", value)
    if value >= -0x80000000:
        return b"\xd2" + struct.pack(">i", value)
    return b"\xd3" + struct.pack(">q", value)


def uint32(value: int) -> bytes:
    """An unsigned 32-bit integer in the uint32 form whatever its value (a frame checksum: fixed width)."""
    return b"\xce" + struct.pack(">I", value)


def float64(value: float) -> bytes:
    return b"\xcb" + struct.pack(">d", value)


def float32_bits(bits: int) -> bytes:
    """A float32 given by its bit pattern, so NaN payloads survive untouched."""
    return b"\xca" + struct.pack(">I", bits)


def float64_bits(bits: int) -> bytes:
    return b"\xcb" + struct.pack(">Q", bits)


def string(value: str) -> bytes:
    raw = value.encode("utf-8")
    n = len(raw)
    if n <= 31:
        return bytes([0xA0 | n]) + raw
    if n <= 0xFF:
        return b"\xd9" + struct.pack(">B", n) + raw
    if n <= 0xFFFF:
        return b"\xda" + struct.pack(">H", n) + raw
    return b"\xdb" + struct.pack(">I", n) + raw


def binary_header(n: int) -> bytes:
    if n <= 0xFF:
        return b"\xc4" + struct.pack(">B", n)
    if n <= 0xFFFF:
        return b"\xc5" + struct.pack(">H", n)
    return b"\xc6" + struct.pack(">I", n)


def array_header(n: int) -> bytes:
    if n <= 15:
        return bytes([0x90 | n])
    if n <= 0xFFFF:
        return b"\xdc" + struct.pack(">H", n)
    return b"\xdd" + struct.pack(">I", n)


def map_header(n: int) -> bytes:
    if n <= 15:
        return bytes([0x80 | n])
    if n <= 0xFFFF:
        return b"\xde" + struct.pack(">H", n)
    return b"\xdf" + struct.pack(">I", n)
