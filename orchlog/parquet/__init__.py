"""Parquet, the at-rest form of a full-tensor trace: write it, pack into it, read it with selections.

    orchlog.parquet.Writer(path, ...)        log tensors from Python straight into Parquet
    orchlog.parquet.open_writer(path, ...)   the same, closed at interpreter exit
    orchlog.parquet.pack(inputs, output)     binary streams and JSONL summaries into one file
    orchlog.parquet.read(path, layer=3, ...) a Trace of the selected rows, tensors read lazily

The layout is in docs/parquet.md; the columns come from schema/orchlog.schema.yaml.
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported on first use: pyarrow costs a third of a second to import, and `orchlog --help` should not pay it.
_LAZY = {
    "PackResult": "orchlog.parquet.packing",
    "pack": "orchlog.parquet.packing",
    "read": "orchlog.parquet.reading",
    "ARROW_SCHEMA": "orchlog.parquet.schema",
    "Writer": "orchlog.parquet.writer",
    "open_writer": "orchlog.parquet.writer",
}

__all__ = ["ARROW_SCHEMA", "PackResult", "Writer", "open_writer", "pack", "read"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'orchlog.parquet' has no attribute {name!r}")
