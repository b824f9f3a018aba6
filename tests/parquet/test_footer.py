"""Parquet footers read and checked in Python: what pyarrow would abort on is a clear error instead."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from orchlog.parquet import footer
from orchlog.parquet.footer import FooterError, decode, encode, read_footer
from orchlog.read.paths import open_trace
from tests.conftest import ROOT
from tests.tracegen import record, write_parquet

REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions"


def _footer_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    length = struct.unpack("<I", data[-8:-4])[0]
    return data[-8 - length : -8]


def test_decoding_and_encoding_a_footer_gives_back_its_bytes(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", [record(f"c{i}", np.ones(16, np.float32), seq=i) for i in range(5)])
    raw = _footer_bytes(path)
    assert encode(decode(raw)) == raw


def test_the_footer_gives_row_counts_and_tensor_null_counts_without_pyarrow(tmp_path):
    recs = [record("a", np.ones(4, np.float32), seq=i) for i in range(3)]
    path = write_parquet(tmp_path / "t.parquet", recs, row_group_bytes=40)
    with open(path, "rb") as f:
        footer = read_footer(f)
    # orchlog keeps no statistics on the tensor column: its null counts are in the footer's metadata.
    assert sum(g.num_rows for g in footer.row_groups) == 3 and footer.null_count(0, "data") is None
    assert footer.key_values[b"orchlog.data_nulls"] == b"[0,0,0]"
    assert b"orchlog.headers" in footer.key_values


def test_a_footer_opened_again_is_not_decoded_again_unless_its_bytes_changed(tmp_path, monkeypatch):
    """Every compare's weight-type peek opens a trace before the walk opens it again: the second open takes
    the footer the first decoded (decoding is Python), and a file rewritten since is decoded afresh."""
    path = write_parquet(tmp_path / "t.parquet", [record(f"c{i}", np.ones(4, np.float32), seq=i) for i in range(3)])
    decoded: list[int] = []

    def counted(data):
        decoded.append(len(data))
        return decode(data)

    monkeypatch.setattr(footer, "decode", counted)
    footer.parse_footer.cache_clear()
    for _ in range(3):
        assert len(list(open_trace(path))) == 3
    assert len(decoded) == 1
    write_parquet(path, [record(f"c{i}", np.ones(4, np.float32), seq=i) for i in range(5)])
    assert len(list(open_trace(path))) == 5
    assert len(decoded) == 2


@pytest.mark.parametrize("name", ["abort-chunk-type-flipped", "abort-level-histogram"])
def test_footers_that_made_pyarrow_abort_are_reported_as_damaged(name):
    path = REGRESSIONS / f"python-parquet-run--{name}.parquet"
    with open(path, "rb") as f, pytest.raises(FooterError):
        read_footer(f)
    # The whole command, in a process of its own: it must end by itself, with one line, not a signal.
    done = subprocess.run(
        [sys.executable, "-m", "orchlog.cli", "show", str(path)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a readable Parquet file" in done.stderr


def test_counts_past_the_footers_bytes_are_refused_before_anything_is_allocated(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", [record("a", np.ones(4, np.float32))])
    data = bytearray(path.read_bytes())
    raw = _footer_bytes(path)
    start = len(data) - 8 - len(raw)
    at = raw.index(b"\x19") if b"\x19" in raw else raw.index(b"\x1c")  # the schema list's header
    data[start + at + 1 : start + at + 1] = b"\xff\xff\xff\xff\x0f"  # a list of 4 billion items
    data[-8:-4] = struct.pack("<I", len(raw) + 5)
    path.write_bytes(bytes(data))
    with open(path, "rb") as f, pytest.raises(FooterError):
        read_footer(f)
