"""Parquet traces (written by `orchlog pack` or `orchlog.parquet.Writer`), found by the `PAR1` magic.

The reader (and pyarrow) is imported only when a Parquet file is opened.
"""

from __future__ import annotations

from pathlib import Path

from orchlog.read.formats import Format, register
from orchlog.read.trace import Trace

FORMAT_NAME = "orchlog-parquet"  # orchlog.parquet.reading.FORMAT_NAME
MAGIC = b"PAR1"


def _sniff(path: Path, head: bytes) -> bool:
    return head.startswith(MAGIC)


def _open(path: Path) -> Trace:
    from orchlog.parquet.reading import open_parquet  # pyarrow costs a third of a second: only for Parquet

    return open_parquet(path)


register(Format(FORMAT_NAME, _sniff, _open, priority=5))
