"""The header's BLAKE3 agrees with the `blake3` package on random buffers of
many lengths, on every kernel path this CPU runs (each path is forced)."""

from __future__ import annotations

import blake3
import numpy as np
import pytest

from orchlog import _native
from tests.conftest import load_vectors

PATHS = ["portable", "sse41", "avx2", "avx512"]

# Lengths around every boundary the tree has: blocks (64), chunks (1024), the
# SIMD batch widths (4, 8, 16 chunks), the partial batches of 2 or 3 chunks
# left over after them, and the 64 KiB segments; plus random lengths.
_EDGES = [
    0,
    1,
    63,
    64,
    65,
    1023,
    1024,
    1025,
    2048,
    2049,
    3 * 1024,
    3 * 1024 + 5,
    4 * 1024 - 1,
    4 * 1024 + 1,
    8 * 1024 + 7,
    11 * 1024,
    16 * 1024,
    16 * 1024 + 1,
    17 * 1024,
    19 * 1024,
    23 * 1024 + 1,
    65535,
    65536,
    65537,
    2 * 65536 + 1,
    5 * 65536 - 3,
]
LENGTHS = sorted(set(_EDGES + np.random.default_rng(0xB1A4E3).integers(0, 600_000, 40).tolist()))


@pytest.mark.parametrize("path", PATHS)
def test_random_buffers_hash_like_the_blake3_package(path):
    if path not in _native.blake3_paths():
        pytest.skip(f"this CPU cannot run the {path} kernel")
    rng = np.random.default_rng(7)
    for n in LENGTHS:
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert _native.blake3_hex(data, path) == blake3.blake3(data).hexdigest(), n


def test_a_multi_megabyte_buffer_hashes_like_the_package_on_the_default_path():
    data = np.random.default_rng(3).integers(0, 256, (9 << 20) + 12345, dtype=np.uint8).tobytes()
    assert _native.blake3_hex(data) == blake3.blake3(data).hexdigest()


def test_the_portable_path_is_always_available():
    assert "portable" in _native.blake3_paths()


@pytest.mark.parametrize("path", PATHS)
def test_the_official_vectors_hash_the_same_through_the_python_binding(path):
    if path not in _native.blake3_paths():
        pytest.skip(f"this CPU cannot run the {path} kernel")
    for case in load_vectors("blake3_official.json")["cases"]:
        data = bytes(i % 251 for i in range(case["input_len"]))
        assert _native.blake3_hex(data, path) == case["hash"], case["input_len"]
