"""schema/orchlog.schema.yaml loads, and malformed schemas fail with a clear message naming the place."""

from __future__ import annotations

import copy

import pytest
import yaml

from orchlog.codegen import schema


@pytest.fixture()
def raw(repo_root):
    return yaml.safe_load((repo_root / "schema" / "orchlog.schema.yaml").read_text(encoding="utf-8"))


def test_shipped_schema_loads_with_documented_fields():
    s = schema.load()
    assert s.version == 3
    assert [f.name for f in s.record][:2] == ["checkpoint", "team"]
    assert all(f.doc for f in (*s.record, *s.header, *s.stats, *s.producer))
    assert {d.name for d in s.dtypes} >= {"f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64"}
    assert {"ORCH_LOG_FILE", "ORCH_LOG_SELECT", "SOURCE_DATE_EPOCH"} <= {k.name for k in s.env}
    assert s.env_default("ORCH_LOG_VALUES") == "10"


def test_data_is_only_in_binary_encodings():
    s = schema.load()
    assert "data" not in [f.name for f in s.record_fields("jsonl")]
    assert [f.name for f in s.record_fields("msgpack")][-2:] == ["data", "crc32c"]  # the checksum closes a frame


def test_a_frame_field_before_the_tensor_bytes_is_rejected(raw):
    fields = raw["record"]["fields"]
    fields.insert(len(fields) - 2, fields.pop())
    with pytest.raises(schema.SchemaError, match="frame fields are the binary stream's last fields"):
        schema.parse(raw)


def test_the_header_frames_must_carry_the_records_checksum(raw):
    raw["header"]["fields"].pop()
    with pytest.raises(schema.SchemaError, match="its frame fields must be the record's"):
        schema.parse(raw)


def test_missing_key_is_named(raw):
    del raw["record"]["fields"][0]["doc"]
    with pytest.raises(schema.SchemaError, match=r"record.fields\[0\]: missing key 'doc'"):
        schema.parse(raw)


def test_unknown_field_type_is_rejected(raw):
    raw["record"]["fields"][1]["type"] = "string"
    with pytest.raises(schema.SchemaError, match="unknown type 'string'"):
        schema.parse(raw)


def test_duplicate_field_is_rejected(raw):
    raw["record"]["fields"].append(copy.deepcopy(raw["record"]["fields"][0]))
    with pytest.raises(schema.SchemaError, match="duplicate field 'checkpoint'"):
        schema.parse(raw)


def test_header_must_start_with_the_version_marker(raw):
    fields = raw["header"]["fields"]
    fields[:-1] = fields[-2::-1]  # the frame checksum stays last
    with pytest.raises(schema.SchemaError, match="first field must be `orchlog`"):
        schema.parse(raw)


def test_unknown_env_type_is_rejected(raw):
    raw["env"][0]["type"] = "url"
    with pytest.raises(schema.SchemaError, match="ORCH_LOG_FILE: unknown type 'url'"):
        schema.parse(raw)


def test_invalid_yaml_names_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("record: [unclosed\n")
    with pytest.raises(schema.SchemaError, match="bad.yaml: not valid YAML"):
        schema.load(bad)


def test_every_record_field_says_where_its_value_comes_from():
    s = schema.load()
    assert {f.source for f in s.record} <= schema.RECORD_SOURCES
    assert [f.name for f in s.fields_from("key") if f.positional] == ["token_idx", "layer", "stage", "step"]
    assert s.record_field("rank").run_default == "rank"


def test_a_record_field_without_a_source_is_rejected(raw):
    del raw["record"]["fields"][1]["source"]
    with pytest.raises(schema.SchemaError, match="record field team: missing key 'source'"):
        schema.parse(raw)


@pytest.mark.parametrize(
    "at, field, message",
    [
        (
            6,
            {"name": "shard", "type": "i32", "source": "key"},
            "shard: a key part must be nullable or have a run_default",
        ),
        (
            8,
            {"name": "deterministic", "type": "bool", "source": "run"},
            "deterministic: a run field needs an env knob with setting",
        ),
        (
            2,
            {"name": "request_id", "type": "i64", "source": "key", "nullable": True},
            "positional key parts must come before",
        ),
        (15, {"name": "sketch", "type": "floats", "source": "digest"}, "sketch.*positive `length`"),
        (15, {"name": "peak", "type": "f64", "source": "digest"}, "peak: a digest is stats, hex256 or floats"),
        (
            7,
            {"name": "tag", "type": "shape", "source": "key", "nullable": True},
            "tag: a key part is str, bool or an integer",
        ),
    ],
    ids=[
        "key part neither nullable nor defaulted",
        "run field without a knob",
        "named part before a positional one",
        "floats without a length",
        "digest of a scalar",
        "key part of a list type",
    ],
)
def test_a_field_no_language_could_generate_is_rejected_with_its_reason(raw, at, field, message):
    raw["record"]["fields"].insert(at, {**field, "doc": "d"})
    with pytest.raises(schema.SchemaError, match=message):
        schema.parse(raw)


def test_engine_knobs_and_developer_variables_keep_their_prefixes(raw):
    s = schema.load()
    assert all(k.name.startswith(("ORCH_LOG_", "ORCH_GRAFT_")) or k.name == "SOURCE_DATE_EPOCH" for k in s.env)
    assert all(v.name.startswith("ORCHLOG_") for v in s.developer_env)
    raw["env"][1]["name"] = "ORCHLOG_TEAM"
    with pytest.raises(schema.SchemaError, match="ORCHLOG_ is the developer prefix"):
        schema.parse(raw)


def test_two_parquet_columns_of_one_name_are_rejected(raw):
    raw["record"]["fields"][1]["parquet"] = "checkpoint"
    with pytest.raises(schema.SchemaError, match="two Parquet columns share a name: checkpoint"):
        schema.parse(raw)


def test_two_dtypes_of_one_parquet_spelling_are_rejected(raw):
    raw["dtypes"][1]["parquet"] = raw["dtypes"][0]["parquet"]
    with pytest.raises(schema.SchemaError, match="two share the Parquet spelling"):
        schema.parse(raw)
