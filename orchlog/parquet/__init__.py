"""Parquet, the at-rest form of a full-tensor trace: write it, pack into it, read it with selections.

    orchlog.parquet.Writer(path, ...)        log tensors from Python straight into Parquet
    orchlog.parquet.open_writer(path, ...)   the same, closed at interpreter exit
    orchlog.parquet.pack(inputs, output)     binary streams and JSONL summaries into one file
    orchlog.parquet.read(path, layer=3, ...) a Trace of the selected rows, tensors read lazily

The layout is in docs/parquet.md; the columns come from schema/orchlog.schema.yaml.
"""

from orchlog.parquet.pack import PackResult, pack
from orchlog.parquet.read import read
from orchlog.parquet.schema import ARROW_SCHEMA
from orchlog.parquet.writer import Writer, open_writer

__all__ = ["ARROW_SCHEMA", "PackResult", "Writer", "open_writer", "pack", "read"]
