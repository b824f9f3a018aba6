"""How a trace is laid out in Parquet: the generated Arrow schema and the column settings.

The columns, their names and types come from the schema file (`schema_gen.arrow_schema`,
`schema_gen.PARQUET_COLUMNS`: a field whose name would shadow a pandas or Polars
attribute, `dtype` say, has a column of another name, `tensor_dtype`); this module
adds what the schema does not fix: which columns carry statistics and dictionaries,
the codec, the run headers kept in the file's key-value metadata, and how files of
the first layout (every column named after its field) are read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from orchlog import schema_gen
from orchlog.encoding.record import json_scalar
from orchlog.encoding.text import json_string
from orchlog.parquet.settings import CODECS as CODECS
from orchlog.parquet.settings import DEFAULT_CODEC as DEFAULT_CODEC
from orchlog.parquet.settings import DEFAULT_LEVEL as DEFAULT_LEVEL
from orchlog.parquet.settings import DEFAULT_ROW_GROUP_BYTES as DEFAULT_ROW_GROUP_BYTES

ARROW_SCHEMA: pa.Schema = schema_gen.arrow_schema()
COLUMN_OF: dict[str, str] = schema_gen.PARQUET_COLUMNS  # record field (stats flattened) -> column
FIELD_OF: dict[str, str] = {column: field for field, column in COLUMN_OF.items()}
COLUMNS: tuple[str, ...] = tuple(ARROW_SCHEMA.names)
STATS_COLUMNS: tuple[str, ...] = tuple(COLUMN_OF[f.name] for f in schema_gen.STATS_FIELDS)
DATA_COLUMN = COLUMN_OF["data"]
DTYPE_COLUMN = COLUMN_OF["dtype"]
# Everything but the tensor bytes: what a scan reads to find records.
SUMMARY_COLUMNS: tuple[str, ...] = tuple(c for c in COLUMNS if c != DATA_COLUMN)
# The fields a reader may filter on (the record's identity); their row-group min/max make the filters skip data.
FILTER_FIELDS: tuple[str, ...] = schema_gen.KEY_FIELDS
FILTER_COLUMNS: tuple[str, ...] = tuple(COLUMN_OF[f] for f in FILTER_FIELDS)
# The dtype column's values back to dtype names: NumPy's spellings, and layout 1's names.
DTYPE_OF_SPELLING: dict[str, str] = {
    **schema_gen.DTYPE_ALIASES,
    **{spelling: name for name, spelling in schema_gen.DTYPE_PARQUET.items()},
}

# Low-cardinality text repeats in every row; dictionaries make it nearly free. Tensor bytes
# never repeat, and trying a dictionary on them (pyarrow's default) made writes a third slower.
DICTIONARY_COLUMNS = [COLUMN_OF[f] for f in ("checkpoint", "team", "stage", "dtype")]
# Min/max per row group let DuckDB, Polars and orchlog's reader skip row groups; for lists,
# maps and hashes they would say nothing useful. The tensor column has none: the writer
# compares every tensor's bytes to find a min/max it then drops (values over 4 KiB), which
# cost pack a third of its time. What a reader wants from them, how many rows of each row
# group hold no tensor, is kept in the footer's key-value metadata instead (DATA_NULLS_KEY).
STATISTICS_COLUMNS = [*FILTER_COLUMNS, DTYPE_COLUMN, COLUMN_OF["numel"], *STATS_COLUMNS]
DATA_NULLS_KEY = "orchlog.data_nulls"  # JSON list: rows without a tensor, per row group

# Summaries without data are tiny; this bounds a row group of them all the same.
MAX_ROWS_PER_GROUP = 65536
# Parquet stores a binary value's length and its page's size as 32-bit signed integers;
# the margin leaves room for the page's length prefix and levels.
MAX_TENSOR_BYTES = 2**31 - 1 - 64 * 1024

SCHEMA_VERSION_KEY = schema_gen.PARQUET_SCHEMA_VERSION_KEY
HEADERS_KEY = schema_gen.PARQUET_HEADERS_KEY


def writer_options(codec: str = DEFAULT_CODEC, level: int | None = DEFAULT_LEVEL) -> dict[str, Any]:
    """Keyword arguments for pyarrow.parquet.ParquetWriter that every orchlog writer uses."""
    if codec not in CODECS:
        raise ValueError(f"unknown codec {codec!r}; choose one of {', '.join(CODECS)}")
    options: dict[str, Any] = {
        "compression": codec,
        "use_dictionary": DICTIONARY_COLUMNS,
        "write_statistics": STATISTICS_COLUMNS,
    }
    if level is not None and codec in ("zstd", "gzip"):
        options["compression_level"] = level
    return options


def schema_with_headers(headers: Iterable[Mapping[str, Any]]) -> pa.Schema:
    """The Arrow schema with its metadata (schema and layout versions, byte order) and the run headers."""
    return ARROW_SCHEMA.with_metadata({**ARROW_SCHEMA.metadata, HEADERS_KEY.encode(): headers_json(headers).encode()})


def file_columns(names: Iterable[str]) -> dict[str, str]:
    """Record field -> its column in a file with these column names: this layout's, or layout 1's.

    Layout 1 named every column after its field; a file that has some of those
    names and none of the names that replaced them is read by them.
    """
    present = set(names)
    renamed = [field for field, column in COLUMN_OF.items() if column != field]
    legacy = any(f in present for f in renamed) and not any(COLUMN_OF[f] in present for f in renamed)
    return {field: field if legacy else column for field, column in COLUMN_OF.items()}


def dtype_name(spelling: str | None) -> str | None:
    """The dtype name for the dtype column's value (`<f4`, `bfloat16`, or layout 1's `f32`); unknown ones kept."""
    return None if spelling is None else DTYPE_OF_SPELLING.get(spelling, spelling)


def headers_json(headers: Iterable[Mapping[str, Any]]) -> str:
    """A JSON array of header objects, each field in its own order, numbers by the canonical rule."""
    return "[" + ",".join(_json(h) for h in headers) + "]"


def _json(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{json_string(str(k))}:{_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_json(v) for v in value) + "]"
    return json_scalar(value)


def headers_from(metadata: Mapping[bytes, bytes] | None) -> list[dict[str, Any]]:
    """The run headers stored in a file's key-value metadata ([] when there are none)."""
    raw = (metadata or {}).get(HEADERS_KEY.encode())
    if not raw:
        return []
    headers = json.loads(raw)
    return [h for h in headers if isinstance(h, dict)] if isinstance(headers, list) else []


def schema_version_of(metadata: Mapping[bytes, bytes] | None, key: str = SCHEMA_VERSION_KEY) -> int | None:
    """The version a file's metadata states under `key` (the schema's, or PARQUET_LAYOUT_KEY's); None if none."""
    raw = (metadata or {}).get(key.encode())
    try:
        return int(raw) if raw else None
    except ValueError:
        return None
