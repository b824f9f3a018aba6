"""Packing and reading a trace keep memory bounded by row groups, far below the trace's size."""

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
TRACE_MIB = 384
# pyarrow holds a row group's page and its compressed copy while writing, pack gathers the
# next row group meanwhile, and the allocator keeps some of what was freed: measured about
# 75 MiB for pack and 35-65 MiB for reading here, whatever the trace size.
BOUND_MIB = TRACE_MIB // 3


def _peak_rss_mib(code: str) -> float:
    """Peak resident memory of a fresh Python that has loaded every orchlog format, then runs `code`.

    VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's (pytest's) when that is larger.
    """
    # orchlog.parquet imports pyarrow on first use: load its modules here so that the baseline holds them.
    preload = "import orchlog.read.formats, orchlog.parquet.packing, orchlog.parquet.reading; orchlog.read.formats.formats()\n"
    script = preload + textwrap.dedent(code)
    script += "\nprint(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return int(out.split()[-1]) / 1024


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "big.bin"
    tensor = np.random.default_rng(0).standard_normal(MiB).astype(np.float32)  # 4 MiB
    frame = encode_record(record("x", tensor)).frame
    with open(path, "wb") as f:
        f.write(encode_header(header())[1])
        for _ in range(TRACE_MIB // 4):
            f.write(frame)  # the same tensor again: what matters here is how much is held at once
    return path


@pytest.fixture(scope="module")
def baseline() -> float:
    return _peak_rss_mib("")


def _pack(stream) -> str:
    return f"""
        from orchlog.parquet import pack
        pack([{str(stream)!r}], {str(stream.with_suffix(".parquet"))!r}, row_group_bytes={ROW_GROUP_MIB * MiB})
    """


@pytest.mark.slow
def test_pack_holds_row_groups_not_the_trace(stream, baseline):
    assert _peak_rss_mib(_pack(stream)) - baseline < BOUND_MIB


@pytest.mark.slow
def test_reading_every_tensor_in_order_holds_row_groups_not_the_trace(stream, baseline):
    subprocess.run([sys.executable, "-c", textwrap.dedent(_pack(stream))], check=True)
    peak = _peak_rss_mib(f"""
        from orchlog.parquet import read
        assert sum(rec.tensor().nbytes for rec in read({str(stream.with_suffix(".parquet"))!r})) == {TRACE_MIB * MiB}
    """)
    assert peak - baseline < BOUND_MIB
