"""The stats vectors can tell a rounded square from a fused multiply-add.

FORMAT.md requires squares to be rounded products. Squares of f32, f16 and
bf16 values are exact in f64, so only the f64 case `stats_squares_not_fused`
can catch an emitter whose compiler contracted `q += x*x` into an FMA; this
checks that with an FMA its printed rms really would differ.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np

from orchlog.encoding import floats
from tests.conftest import load_vectors

LANES = 8


def _rms(values: list[float], fused: bool) -> float:
    lanes = [0.0] * LANES
    for i, x in enumerate(values):
        if fused:  # one rounding of the exact acc + x*x
            lanes[i % LANES] = float(Fraction(lanes[i % LANES]) + Fraction(x) * Fraction(x))
        else:
            lanes[i % LANES] = lanes[i % LANES] + x * x
    total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
    return math.sqrt(total / len(values))


def _case(name: str) -> dict:
    return next(c for c in load_vectors("records.json")["cases"] if c["name"] == name)


def test_an_fma_would_change_the_printed_rms_of_the_squares_case():
    case = _case("stats_squares_not_fused")
    values = np.frombuffer(bytes.fromhex(case["input"]["data_hex"]), "<f8").tolist()
    printed = json.loads(case["expected"]["jsonl"])["stats"]["rms"]
    assert printed == _rms(values, fused=False)
    assert floats.format_float(_rms(values, fused=True)) != floats.format_float(printed)


def test_its_whole_blocks_of_eight_alone_detect_fma_not_just_the_tail():
    values = np.frombuffer(bytes.fromhex(_case("stats_squares_not_fused")["input"]["data_hex"]), "<f8").tolist()
    assert len(values) % LANES != 0
    assert _rms(values[:16], fused=False) != _rms(values[:16], fused=True)
