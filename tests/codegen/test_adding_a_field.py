"""A field added to the schema as one entry reaches every generated output: C++, C, Rust, Python, the JSON
Schema, the vectors and the native JSONL parser's field sequence (tests/codegen/next_fields.py adds them)."""

from __future__ import annotations

import json
import re
import sys
import types

import jsonschema
import pytest

from orchlog.codegen import generate_all
from tests.codegen import next_fields
from tests.markup import search


@pytest.fixture(scope="module")
def extended(repo_root):
    """The generated files of the schema with the next fields (the lane sums computed by the test's stand-in)."""
    with pytest.MonkeyPatch.context() as patch:
        next_fields.stand_in_functions(patch)
        return generate_all(next_fields.extended_schema(repo_root))


@pytest.fixture(scope="module")
def tables(extended):
    """The generated Python tables, as a module of their own."""
    module = types.ModuleType("extended_schema_gen")
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    try:
        exec(compile(extended["orchlog/schema_gen.py"], "extended_schema_gen.py", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module


def test_the_shipped_outputs_have_none_of_the_next_fields():
    shipped = "\n".join(generate_all().values())
    assert not any(re.search(rf"\b{name}\b", shipped) for name in [*next_fields.NEW_FIELDS, "crc_ieee"])


def test_cpp_keys_get_a_member_and_a_setter_per_key_part(extended):
    api = extended["native/cpp/include/orchlog/api_gen.hpp"]
    assert "std::optional<std::int64_t> request_id;" in api
    assert "std::optional<bool> speculative;" in api
    assert "Key with_beam(const V& value) const" in api
    assert 'f(std::string_view("num_experts"), key.num_experts);' in api
    assert "std::optional<bool> deterministic;  // ORCH_LOG_DETERMINISTIC" in api  # a setting of Options


def test_cpp_records_visit_the_new_fields_in_schema_order(extended):
    views = extended["native/cpp/include/orchlog/schema_gen.hpp"]
    visit = views[views.index("void visit_record(") :]
    keys = re.findall(r'v\.key\("(\w+)"\);', visit[: visit.index("\n}\n")])
    assert keys[6:12] == ["rank", "request_id", "expert", "beam", "num_experts", "speculative"]
    assert keys[keys.index("world_size") :][:2] == ["world_size", "deterministic"]
    assert "v.opt_boolean(r.speculative);" in visit and "v.floats_f32(r.lane_sums);" in visit
    plumbing = extended["native/cpp/include/orchlog/detail/fields_gen.hpp"]
    assert "digest_lane_sums(pass, d.lane_sums);" in plumbing  # the one hand-written function a digest needs
    assert "v.request_id = p.key.request_id;" in plumbing and "v.deterministic = run.deterministic;" in plumbing
    assert "k.deterministic = knob_bool(o.deterministic, schema::kKnobDeterministic, warnings);" in plumbing


def test_the_c_abi_names_new_parts_without_changing_the_key_struct(extended):
    header = extended["native/cpp/include/orchlog/orchlog.h"]
    key = header[header.index("typedef struct orchlog_key {") : header.index("} orchlog_key;")]
    assert not re.search(r"\brequest_id\b", key)  # old initializers {t, l, s, NULL} stay complete
    parts = header[header.index("typedef struct orchlog_named_parts {") : header.index("} orchlog_named_parts;")]
    assert "int64_t request_id;" in parts and "int32_t speculative;" in parts
    assert "#define ORCHLOG_PART_REQUEST_ID (1u << 1)" in header
    assert "const char* deterministic; /* ORCH_LOG_DETERMINISTIC */" in header
    glue = extended["native/c/abi_gen.hpp"]
    assert "if (parts->given & ORCHLOG_PART_REQUEST_ID) key.request_id" in glue


def test_rust_gets_a_setter_per_key_part_and_a_config_member_per_knob(extended):
    rust = extended["native/rust/src/fields_gen.rs"]
    assert "pub fn request_id(mut self, index: impl KeyIndex) -> Self {" in rust
    assert "pub fn speculative(mut self, value: impl Flag) -> Self {" in rust
    assert "pub deterministic: bool," in rust and "deterministic: knobs.bool(&KNOB_DETERMINISTIC)," in rust
    assert "lane_sums: digest::digest_lane_sums(&pass)" in rust
    assert "v.floats_f32(r.lane_sums);" in extended["native/rust/src/schema_gen.rs"]


def test_python_types_carry_the_new_fields(tables):
    assert {"request_id", "speculative", "deterministic"} <= set(tables.RecordInput.__dataclass_fields__)
    assert set(tables.NamedKeyParts.__annotations__) >= {"rank", "request_id", "expert", "speculative"}
    assert "deterministic" in tables.RunSettings.__annotations__
    assert tables.KEY_PARTS[5:10] == ("request_id", "expert", "beam", "num_experts", "speculative")
    assert tables.ColumnSpec("lane_sums", "floats", 4, "f32") in tables.COLUMNS
    assert tables.ColumnSpec("speculative", "bool") in tables.COLUMNS
    assert "lane_sums" in {f.name for f in tables.RecordFields.__dataclass_fields__.values()}
    assert "lane_sums" in tables.arrow_schema().names


def test_the_json_schema_describes_them_and_accepts_every_new_vector_line(extended):
    doc = json.loads(extended["schema/orchlog.jsonl.schema.json"])
    record = doc["$defs"]["record"]["properties"]
    assert record["request_id"]["oneOf"][0] == {"type": "integer", "maximum": 2**63 - 1, "minimum": 0}
    assert record["lane_sums"]["minItems"] == record["lane_sums"]["maxItems"] == 4
    validator = jsonschema.Draft202012Validator(doc)
    for case in json.loads(extended["schema/vectors/records.json"])["cases"]:
        line = json.loads(case["expected"]["jsonl"])
        assert not list(validator.iter_errors(line)), case["name"]
        line.pop("request_id")
        assert not validator.is_valid(line)  # every field is required


def test_every_record_vector_carries_them_and_the_full_case_sets_their_examples(extended):
    cases = json.loads(extended["schema/vectors/records.json"])["cases"]
    for case in cases:
        line = json.loads(case["expected"]["jsonl"])
        assert [k for k in line if k in next_fields.NEW_FIELDS] == next_fields.NEW_FIELDS, case["name"]
        assert set(next_fields.NEW_FIELDS) - {"lane_sums"} <= set(case["input"])  # what an emitter is given
    full = next(json.loads(c["expected"]["jsonl"]) for c in cases if c["name"] == "f32_all_fields")
    assert {p["name"]: full[p["name"]] for p in next_fields.KEY_PARTS} == {
        p["name"]: p["example"] for p in next_fields.KEY_PARTS
    }
    empty = next(json.loads(c["expected"]["jsonl"]) for c in cases if c["name"] == "f32_no_optionals")
    assert (empty["request_id"], empty["speculative"], empty["deterministic"]) == (None, None, False)
    assert empty["lane_sums"] == [0, 0, 0, 0] or len(empty["lane_sums"]) == 4


def test_a_new_knob_gets_its_vectors_and_warnings(extended):
    cases = [
        c for c in json.loads(extended["schema/vectors/env.json"])["knobs"] if c["knob"] == "ORCH_LOG_DETERMINISTIC"
    ]
    assert {c["raw"]: c["value"] for c in cases if c["warning"] is None} == {
        None: False,
        "0": False,
        "1": True,
        " 1\t": True,
    }
    assert "ORCH_LOG_DETERMINISTIC='true' is not 0 or 1; using 0" in [c["warning"] for c in cases]


def test_the_native_jsonl_parser_walks_the_new_literals_in_order(extended):
    parser = extended["native/python/kernels/jsonl_layout_gen.hpp"]
    body = parser[parser.index("inline bool parse_line(") :]
    literals = re.findall(r'k\.lit\("((?:[^"\\]|\\.)*)"\)', body)
    names = [search(r'\\"(\w+)\\"', lit).group(1) for lit in literals if '\\"' in lit]
    line = json.loads(json.loads(extended["schema/vectors/records.json"])["cases"][0]["expected"]["jsonl"])
    # The top-level keys, in order (a field read in two forms, as the sketch is, has a literal for each).
    assert list(dict.fromkeys(n for n in names if n in line)) == list(line)
    assert "k.opt_bool(speculative)" in body and "k.fixed_numbers(lane_sums, 4)" in body
    assert "std::vector<float> lane_sums;  // 4 per row, at the schema's precision" in parser  # an f32 field


def test_a_frame_field_is_in_the_binary_stream_only_computed_by_its_writer(extended, tables):
    views = extended["native/cpp/include/orchlog/schema_gen.hpp"]
    assert "if constexpr (E == Encoding::msgpack) {\n    v.frame_crc_ieee();" in views  # the writer writes its key
    record_view = views[views.index("struct RecordView {") : views.index("// ----", views.index("struct RecordView {"))]
    assert not re.search(r"\bcrc_ieee\b", record_view)  # nothing to hold: the writer computes it
    assert "fn frame_crc_ieee(&mut self) {}" in extended["native/rust/src/schema_gen.rs"]
    for name in ("schema/orchlog.jsonl.schema.json", "native/python/kernels/jsonl_layout_gen.hpp"):
        assert not re.search(r"\bcrc_ieee\b", extended[name]), name
    assert "crc_ieee" not in tables.RecordInput.__dataclass_fields__
    assert "crc_ieee" not in tables.arrow_schema().names
    frames = [c["expected"]["frame_hex"] for c in json.loads(extended["schema/vectors/records.json"])["cases"]]
    frames += [c["expected"]["frame_hex"] for c in json.loads(extended["schema/vectors/headers.json"])["cases"]]
    for frame in map(bytes.fromhex, frames):
        at = frame.index(b"\xa8crc_ieee")
        assert b"\xa4data" not in frame or frame.index(b"\xa4data") < at  # after the tensor bytes, covering them
        value = frame[at + 9 : at + 9 + 5]
        assert value[0] == 0xCE and int.from_bytes(value[1:5], "big") == next_fields.frame_crc_ieee(frame[:at])
        assert frame[at + 14 :].startswith(b"\xa6crc32c\xce") and len(frame) == at + 14 + 12  # the checksum last


def test_the_native_frame_decoder_reads_each_new_field_by_its_key_into_its_column(extended):
    layout = extended["native/python/kernels/frame_layout_gen.hpp"]
    key_table = layout[layout.index("inline FrameKey frame_key(") : layout.index("struct FrameRecord")]
    reads = layout[layout.index("inline bool read_field(") : layout.index("inline void push_record(")]
    pushes = layout[layout.index("inline void push_record(") :]
    for name in next_fields.NEW_FIELDS:
        assert f'key_is(k, "{name}")' in key_table, name
        assert re.search(rf"case kFrame\w+:\n\s+return [^\n]*[fc]\.{name}\b", reads), name  # the record, or its column
        assert f"c.{name}." in pushes, name
    assert "case kFrameCrcIeee:\n      return r.skip();" in reads  # a frame field is the writer's check, not read
