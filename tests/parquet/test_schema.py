"""The Arrow schema comes from the schema file: every field typed, tensors as large_binary, headers in the footer."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from orchlog import schema_gen
from orchlog.parquet.schema import (
    ARROW_SCHEMA,
    COLUMN_OF,
    headers_from,
    headers_json,
    schema_with_headers,
    writer_options,
)
from tests.tracegen import header, record, write_parquet


def test_every_record_field_has_a_typed_column_and_stats_are_flattened():
    expected = [f.name for f in schema_gen.RECORD_FIELDS if "parquet" in f.encodings and f.name != "stats"]
    stats = [f.name for f in schema_gen.STATS_FIELDS]
    assert ARROW_SCHEMA.names == [COLUMN_OF[f] for f in COLUMN_OF]
    assert [f for f in COLUMN_OF if f not in stats] == expected
    assert list(COLUMN_OF)[list(COLUMN_OF).index("numel") + 2 :][: len(stats)] == stats
    column = {f: ARROW_SCHEMA.field(c) for f, c in COLUMN_OF.items()}
    assert column["data"].type == pa.large_binary()
    assert column["shape"].type == pa.list_(pa.int64())
    assert column["values"].type == pa.list_(pa.float64())
    assert column["meta"].type == pa.map_(pa.string(), pa.string())
    assert column["layer"].type == pa.int32() and column["token_idx"].type == pa.int64()
    no_text_blobs = {"checkpoint", "team", "stage", "dtype", "blake3", "full_reason"}
    assert {f for f, c in column.items() if c.type == pa.string()} == no_text_blobs


def test_nullability_follows_the_schema_file():
    nullable = {f.name for f in schema_gen.RECORD_FIELDS if f.nullable and "parquet" in f.encodings}
    nullable |= {f.name for f in schema_gen.STATS_FIELDS if f.nullable}
    assert {f for f, c in COLUMN_OF.items() if ARROW_SCHEMA.field(c).nullable} == nullable


def test_the_file_footer_holds_the_schema_version_and_every_header(tmp_path):
    head = header(team="ours", model="qwen2.5-0.5b.gguf", config={"seed": 42, "temp": 0.5, "greedy": True})
    path = write_parquet(tmp_path / "t.parquet", [record("a", pa.array([1.0], pa.float32()).to_numpy())], head)
    kv = pq.ParquetFile(path).metadata.metadata
    assert kv[schema_gen.PARQUET_SCHEMA_VERSION_KEY.encode()] == str(schema_gen.SCHEMA_VERSION).encode()
    (stored,) = json.loads(kv[schema_gen.PARQUET_HEADERS_KEY.encode()])
    assert stored["team"] == "ours" and stored["model"] == "qwen2.5-0.5b.gguf"
    assert stored["config"] == {"greedy": True, "seed": 42, "temp": 0.5}
    assert headers_from(kv) == [stored]


def test_headers_are_written_as_canonical_json_in_field_order():
    text = headers_json([{"orchlog": 1, "team": "t", "model": None, "config": {"a": 1.0, "b": float("nan")}}])
    assert text == '[{"orchlog":1,"team":"t","model":null,"config":{"a":1,"b":"NaN"}}]'


def test_the_schema_metadata_carries_the_headers_for_pandas_and_polars_users_too():
    schema = schema_with_headers([{"orchlog": 1}])
    assert schema.metadata[schema_gen.PARQUET_HEADERS_KEY.encode()] == b'[{"orchlog":1}]'
    assert schema.metadata[schema_gen.PARQUET_SCHEMA_VERSION_KEY.encode()] == str(schema_gen.SCHEMA_VERSION).encode()


def test_tensor_bytes_get_no_dictionary_and_an_unknown_codec_is_refused():
    options = writer_options()
    assert "data" not in options["use_dictionary"] and "checkpoint" in options["use_dictionary"]
    try:
        writer_options("brotli-max")
    except ValueError as exc:
        assert "unknown codec" in str(exc)
    else:
        raise AssertionError("accepted an unknown codec")
