"""Packing and reading keep memory bounded by the row group size, however large the trace."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from orchlog.encoding.record import encode_header, encode_record
from tests.tracegen import header, record

MiB = 1 << 20
ROW_GROUP_MIB = 8
SIZES_MIB = (64, 256)
# pyarrow holds a row group's page and its compressed copy while writing, and pack gathers
# the next row group meanwhile; a handful of row groups, whatever the trace size.
ROW_GROUPS_HELD = 10


def _peak_rss_mib(code: str) -> float:
    """Peak resident memory of a fresh Python that has loaded every orchlog format, then runs `code`."""
    script = "import orchlog.formats, orchlog.parquet; orchlog.formats.formats()\n" + textwrap.dedent(code)
    script += "\nimport resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return int(out.split()[-1]) / 1024


@pytest.fixture(scope="module")
def streams(tmp_path_factory):
    root = tmp_path_factory.mktemp("big")
    tensor = np.random.default_rng(0).standard_normal(MiB).astype(np.float32)  # 4 MiB
    frame = encode_record(record("x", tensor)).frame
    paths = []
    for size in SIZES_MIB:
        path = root / f"{size}.bin"
        with open(path, "wb") as f:
            f.write(encode_header(header())[1])
            for _ in range(size // 4):
                f.write(frame)  # the same tensor again: what matters here is how much is held at once
        paths.append(path)
    return paths


def _pack(stream) -> str:
    return f"""
        from orchlog.parquet import pack
        pack([{str(stream)!r}], {str(stream.with_suffix(".parquet"))!r}, row_group_bytes={ROW_GROUP_MIB * MiB})
    """


@pytest.mark.slow
def test_pack_holds_a_few_row_groups_however_long_the_trace(streams):
    baseline = _peak_rss_mib("")
    small, large = (_peak_rss_mib(_pack(s)) - baseline for s in streams)
    assert large < ROW_GROUPS_HELD * ROW_GROUP_MIB, (small, large)
    assert large - small < 2 * ROW_GROUP_MIB, "four times the trace must not take more memory"


@pytest.mark.slow
def test_reading_every_tensor_in_order_holds_a_few_row_groups_however_long_the_trace(streams):
    baseline = _peak_rss_mib("")
    peaks = []
    for stream in streams:
        subprocess.run([sys.executable, "-c", textwrap.dedent(_pack(stream))], check=True)
        peaks.append(_peak_rss_mib(f"""
            from orchlog.parquet import read
            assert sum(rec.tensor().nbytes for rec in read({str(stream.with_suffix(".parquet"))!r})) > 0
        """) - baseline)
    small, large = peaks
    assert large < ROW_GROUPS_HELD * ROW_GROUP_MIB, (small, large)
    assert large - small < 2 * ROW_GROUP_MIB, "four times the trace must not take more memory"
