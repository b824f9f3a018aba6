"""Canonical float text: ECMAScript layout of shortest round-trip digits."""

from __future__ import annotations

import json
import math
import random
import struct

import numpy as np
import pytest

from orchlog.encoding.floats import format_float, parse_token
from tests.conftest import load_vectors


@pytest.mark.parametrize(
    "value, precision, text",
    [
        (100.0, "f64", "100"),
        (0.1, "f64", "0.1"),
        (0.1, "f32", "0.1"),
        (1.5e-7, "f64", "1.5e-7"),
        (1e-6, "f64", "0.000001"),
        (1e21, "f64", "1e+21"),
        (1e20, "f64", "100000000000000000000"),
        (123456789012345680000.0, "f64", "123456789012345680000"),
        (3.4028234663852886e38, "f32", "3.4028235e+38"),
        (1.401298464324817e-45, "f32", "1e-45"),
        (5e-324, "f64", "5e-324"),
        (-12345.678, "f64", "-12345.678"),
        (16777216.0, "f32", "16777216"),
        (-0.0, "f32", "-0.0"),
        (0.0, "f64", "0"),
        (math.nan, "f32", '"NaN"'),
        (math.inf, "f64", '"Infinity"'),
        (-math.inf, "f64", '"-Infinity"'),
    ],
)
def test_layout_examples(value, precision, text):
    assert format_float(value, precision) == text


def test_f32_precision_prints_the_short_f32_digits_not_the_f64_ones():
    assert format_float(float(np.float32(0.1)), "f32") == "0.1"
    assert format_float(float(np.float32(0.1)), "f64") == "0.10000000149011612"


def test_random_f32_bit_patterns_round_trip_exactly():
    rng = random.Random(7)
    for _ in range(20000):
        bits = rng.getrandbits(32)
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        if math.isnan(value):
            continue
        text = format_float(value, "f32")
        back = np.float32(parse_token(text) if text.startswith('"') else json.loads(text))
        assert back.tobytes() == np.float32(value).tobytes(), (hex(bits), text)


def test_random_f64_bit_patterns_round_trip_exactly():
    rng = random.Random(8)
    for _ in range(20000):
        bits = rng.getrandbits(64)
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if math.isnan(value):
            continue
        text = format_float(value, "f64")
        back = parse_token(text) if text.startswith('"') else float(json.loads(text))
        assert struct.pack("<d", back) == struct.pack("<d", value), (hex(bits), text)


def test_floats_vector_matches_the_formatter():
    doc = load_vectors("floats.json")
    for bits, text in doc["f32"]:
        assert format_float(struct.unpack("<f", bytes.fromhex(bits)[::-1])[0], "f32") == text
    for bits, text in doc["f64"]:
        assert format_float(struct.unpack("<d", bytes.fromhex(bits)[::-1])[0], "f64") == text
