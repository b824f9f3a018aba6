"""The canonical msgpack writer picks the smallest form, as msgpack-python does."""

from __future__ import annotations

import msgpack
import pytest

from orchlog.encoding import msgpack_canonical as mp

INTS = [
    0,
    1,
    127,
    128,
    255,
    256,
    65535,
    65536,
    2**32 - 1,
    2**32,
    2**64 - 1,
    -1,
    -32,
    -33,
    -128,
    -129,
    -32768,
    -32769,
    -(2**31),
    -(2**31) - 1,
    -(2**63),
]


@pytest.mark.parametrize("value", INTS)
def test_integers_use_the_smallest_form(value):
    assert mp.integer(value) == msgpack.packb(value)


@pytest.mark.parametrize("n", [0, 31, 32, 255, 256, 65535, 65536])
def test_strings_use_the_smallest_form(n):
    s = "x" * n
    assert mp.string(s) == msgpack.packb(s, use_bin_type=True)


@pytest.mark.parametrize("n", [0, 255, 256, 65536])
def test_binary_headers_use_the_smallest_form(n):
    assert mp.binary_header(n) + b"\0" * n == msgpack.packb(b"\0" * n, use_bin_type=True)


@pytest.mark.parametrize("n", [0, 15, 16, 65536])
def test_array_and_map_headers_use_the_smallest_form(n):
    assert mp.array_header(n) + b"\xc0" * n == msgpack.packb([None] * n)
    assert mp.map_header(n) == msgpack.packb({i: None for i in range(n)})[: len(mp.map_header(n))]


def test_float32_keeps_nan_payload_bits():
    assert mp.float32_bits(0x7F800001) == b"\xca\x7f\x80\x00\x01"
    assert mp.float64(1.5) == msgpack.packb(1.5)
