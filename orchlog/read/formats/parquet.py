"""Parquet traces (written by `orchlog pack` or `orchlog.parquet.Writer`), found by the `PAR1` magic."""

from __future__ import annotations

from pathlib import Path

from orchlog.parquet.read import FORMAT_NAME, MAGIC, open_parquet
from orchlog.read.formats import Format, register


def _sniff(path: Path, head: bytes) -> bool:
    return head.startswith(MAGIC)


register(Format(FORMAT_NAME, _sniff, open_parquet, priority=5))
