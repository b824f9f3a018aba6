"""Parquet, the at-rest form of a full-tensor trace: write it, pack into it, read it with selections.

    orchlog.parquet.Writer(path, ...)        log tensors from Python straight into Parquet
    orchlog.parquet.open_writer(path, ...)   the same, closed at interpreter exit
    orchlog.parquet.pack(inputs, output)     binary streams and JSONL summaries into one file
    orchlog.parquet.read(path, layer=3, ...) a Trace of the selected rows, tensors read lazily

The layout is in docs/parquet.md; the columns come from schema/orchlog.schema.yaml.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchlog.lazy import lazy

if TYPE_CHECKING:  # what type checkers see of the names loaded on first use (else every one is Any)
    from orchlog.parquet.packing import PackResult as PackResult
    from orchlog.parquet.packing import pack as pack
    from orchlog.parquet.reading import read as read
    from orchlog.parquet.schema import ARROW_SCHEMA as ARROW_SCHEMA
    from orchlog.parquet.writer import Writer as Writer
    from orchlog.parquet.writer import open_writer as open_writer

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


__getattr__, __dir__ = lazy(__name__, _LAZY)
