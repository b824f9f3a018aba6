"""Every f16 and bf16 bit pattern, and many random f32 and f64 patterns, print
exactly as the reference encoder prints them (values, stats, msgpack bits).

The conformance vectors hold a few hundred chosen numbers; this covers the
rest of the half-precision space and a wide random sample of the others,
where rare cases such as ties between two shortest digit strings hide.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.crosslang import producers
from tests.crosslang.reference import expected_files
from tests.crosslang.test_byte_identical import first_difference


def number_tensors() -> dict:
    rng = np.random.default_rng(0x5EED)
    every_half = np.arange(1 << 16, dtype="<u2").tobytes().hex()
    # Random bit patterns cover every exponent, NaN payloads and subnormals;
    # values near 1 are where activations live.
    f32 = np.concatenate(
        [
            rng.integers(0, 1 << 32, 40_000, dtype=np.uint64).astype("<u4").view("<f4"),
            rng.standard_normal(20_000).astype("<f4"),
        ]
    )
    f64 = np.concatenate(
        [rng.integers(0, 1 << 63, 20_000, dtype=np.uint64).view("<f8"), rng.standard_normal(10_000).astype("<f8")]
    )

    def tensor(name: str, dtype: str, n: int, data_hex: str) -> dict:
        return {
            "checkpoint": name,
            "token_idx": None,
            "layer": None,
            "stage": None,
            "step": None,
            "dtype": dtype,
            "shape": [n],
            "meta": [],
            "data_hex": data_hex,
        }

    return {
        "config": {},
        "tensors": [
            tensor("every_f16", "f16", 1 << 16, every_half),
            tensor("every_bf16", "bf16", 1 << 16, every_half),
            tensor("random_f32", "f32", f32.size, f32.tobytes().hex()),
            tensor("random_f64", "f64", f64.size, f64.tobytes().hex()),
        ],
    }


@pytest.mark.parametrize("mode", ["summary", "full"])
@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_every_half_pattern_and_random_floats_print_like_the_reference(producer, mode, tmp_path):
    doc = number_tensors()
    tensors = tmp_path / "numbers.json"
    tensors.write_text(json.dumps(doc))
    out = tmp_path / "out"
    out.mkdir()
    knobs = {
        "ORCH_LOG_FILE": str(out / "numbers.trace"),
        "ORCH_LOG_MODE": mode,
        "ORCH_LOG_VALUES": "all",
        "SOURCE_DATE_EPOCH": "0",
    }
    written = producers.run(producer, tensors, knobs, out)
    for name, want in expected_files(doc, knobs, producer.language).items():
        assert written[name] == want, f"{producer} {name}: {first_difference(written[name], want)}"
