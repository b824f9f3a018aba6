"""The JSON reader that leaves long strings in the file: the same document as json.loads, long strings as
spans decoded on demand, and damage a clear error."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchlog.read.json_spans import JSONSpanError, Span, parse

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
_docs = st.recursive(
    _scalars,
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5),
    max_leaves=30,
)


def _resolved(value):
    if isinstance(value, Span):
        return value.text()
    if isinstance(value, list):
        return [_resolved(v) for v in value]
    if isinstance(value, dict):
        return {k: _resolved(v) for k, v in value.items()}
    return value


@settings(max_examples=300, deadline=None)
@given(_docs, st.sampled_from([None, 2]))
def test_any_document_reads_as_json_loads_reads_it(doc, indent):
    text = json.dumps(doc, indent=indent).encode()
    assert _resolved(parse(text, long=4)) == json.loads(text)


def test_long_strings_stay_in_the_buffer_until_asked():
    blob = "QUJD" * 5000
    text = json.dumps({"a": {"array": blob, "polygraphy_class": "ndarray"}, "escaped": "x\\n" * 3000}).encode()
    doc = parse(text)
    span = doc["a"]["array"]
    assert isinstance(span, Span) and len(span) == len(blob) and span.bytes_ascii() == blob.encode()
    assert doc["escaped"].text() == "x\\n" * 3000 and doc["a"]["polygraphy_class"] == "ndarray"


@pytest.mark.parametrize(
    "text, message",
    [
        (b'{"a": "no end', "not closed"),
        (b'{"a": 1', "ends before"),
        (b"[1, 2,]", "trailing comma"),
        (b'{"a" 1}', "expected ':'"),
        (b"[" * 600 + b"]" * 600, "nested deeper"),
        (b"{} {}", "more than one value"),
        (b"@", "unexpected byte"),
    ],
)
def test_damaged_json_is_one_clear_error(text, message):
    with pytest.raises(JSONSpanError, match=message):
        parse(text)
