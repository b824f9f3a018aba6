"""Property tests: any value in any field, any bytes after a valid start, never escape a reader.

Hypothesis writes the inputs (a fixed number of examples in the default
suite; `--hypothesis-seed` makes a run repeatable); each property is what
every reader promises: records it cannot use become diagnostics, nothing
else comes out, and no diagnostic is the net's "the reader failed".
"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchlog.encoding.record import encode_header, encode_record
from orchlog.parquet.footer import FooterError, parse_footer
from orchlog.read.paths import open_trace
from orchlog.read.trace import READER_FAILED
from tests.tracegen import header, record

EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "\x1b[2J", "a|b<i>`"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
FIELDS = ["checkpoint", "team", "token_idx", "layer", "stage", "step", "rank", "world_size", "seq", "dtype",
          "shape", "numel", "values", "stats", "blake3", "meta"]  # fmt: skip
LEGACY = {
    "legacy-checkpoint": {"checkpoint": "a", "team": "t", "token_idx": 0, "dtype": "f32", "shape": "[2]", "values": [1, 2]},
    "legacy-trace": {"name": "a", "shape": [2], "dtype": "F32", "blake3": "ab" * 32, "rms": 1.0, "num_elements": 2, "seq": 0},
    "legacy-logits": {"token_idx": 0, "token_id": 3, "logits": [0.5, 1.0]},
}  # fmt: skip


def _read_all(path) -> None:
    trace = open_trace(path)
    for rec in trace:
        try:
            rec.tensor()
        except OSError:
            pass
    assert not [d for d in trace.diagnostics if READER_FAILED in d.message]


def _orchlog_line(field: str, value) -> bytes:
    doc = json.loads(encode_record(record("a", np.arange(4, dtype=np.float32), seq=0)).jsonl)
    doc[field] = value
    return json.dumps(doc, allow_nan=True).encode() + b"\n"


@EXAMPLES
@given(field=st.sampled_from(FIELDS), value=json_values)
def test_any_value_in_any_field_of_an_orchlog_jsonl_record_is_read_or_reported(tmp_path, field, value):
    path = tmp_path / "t.jsonl"
    path.write_bytes(encode_header(header())[0] + _orchlog_line(field, value) + _orchlog_line("seq", 1))
    _read_all(path)


@EXAMPLES
@given(kind=st.sampled_from(sorted(LEGACY)), field=st.text(max_size=12), value=json_values)
def test_any_value_in_any_field_of_a_legacy_line_is_read_or_reported(tmp_path, kind, field, value):
    base = LEGACY[kind]
    key = field if field and kind != "legacy-logits" else next(iter(base))
    damaged = {**base, key: value}
    path = tmp_path / "legacy.jsonl"
    path.write_text(json.dumps(base) + "\n" + json.dumps(damaged, allow_nan=True) + "\n")
    _read_all(path)


@EXAMPLES
@given(tail=st.binary(max_size=400))
def test_any_bytes_after_a_valid_frame_are_read_or_reported(tmp_path, tail):
    path = tmp_path / "t.bin"
    path.write_bytes(
        encode_header(header())[1] + encode_record(record("a", np.ones(3, np.float32), seq=0)).frame + tail
    )
    _read_all(path)


@EXAMPLES
@given(footer=st.binary(max_size=300))
def test_any_footer_bytes_parse_or_raise_footer_error_only(footer):
    try:
        parse_footer(footer, 4, 10_000)
    except FooterError:
        pass
