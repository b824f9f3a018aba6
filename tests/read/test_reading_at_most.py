"""A bounded read costs what the file holds, not the bound: a kilobyte file read with a gigabyte bound."""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from orchlog.read.files import read_at_most
from orchlog.read.formats import open_binary
from orchlog.read.paths import open_trace

T = TypeVar("T")

TOOLS = Path(__file__).parent / "data" / "tools"
GIB = 1 << 30


def _peak_while(run: Callable[[], T]) -> tuple[T, int]:
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_small_file_read_with_a_gigabyte_bound_allocates_kilobytes(tmp_path):
    path = tmp_path / "small.json"
    path.write_bytes(b"{}" * 1000)
    with open(path, "rb") as f:
        data, peak = _peak_while(lambda: read_at_most(f, GIB + 1))
    assert data == b"{}" * 1000
    assert peak < 4 << 20, f"{peak:,} bytes allocated for 2,000"


def test_the_bound_is_exact_across_chunks(tmp_path):
    path = tmp_path / "big.bin"
    body = bytes(range(256)) * (12 << 10)  # 3 MiB: three chunks and more
    path.write_bytes(body)
    with open(path, "rb") as f:
        assert read_at_most(f, (2 << 20) + 3) == body[: (2 << 20) + 3]
    with open(path, "rb") as f:
        assert read_at_most(f, len(body) + 1) == body
    with open(path, "rb") as f:
        assert read_at_most(f, 0) == b""


def test_a_gzipped_file_is_read_whole_through_open_binary(tmp_path):
    path = tmp_path / "tree.json.gz"
    body = b'{"module_path": "x"}' * 50_000
    path.write_bytes(gzip.compress(body))
    with open_binary(path) as f:
        assert read_at_most(f, GIB + 1) == body


@pytest.mark.parametrize("dump", ["hf-clean", "msprobe-statistics-clean"])
def test_a_tool_dump_read_whole_costs_far_less_than_its_readers_bound(dump):
    # Both readers read their JSON whole under a 1 GiB bound (MAX_FILE).
    def read() -> int:
        return len(list(open_trace(TOOLS / dump)))

    records, peak = _peak_while(read)
    assert records > 0
    assert peak < 256 << 20, f"{peak:,} bytes allocated reading {dump}"
