"""encode_record validates its input and lays fields out in schema order."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from orchlog import schema_gen
from orchlog.encoding.record import ALL_VALUES, RecordInput, encode_record


def _rec(**kw) -> RecordInput:
    base: dict[str, Any] = dict(checkpoint="x", dtype="f32", shape=(4,), data=np.arange(4, dtype="<f4").tobytes())
    base.update(kw)
    return RecordInput(**base)


def test_fields_follow_the_schema_order():
    line = json.loads(encode_record(_rec()).jsonl)
    assert list(line) == [f.name for f in schema_gen.RECORD_FIELDS if "jsonl" in f.encodings]


def test_values_count_is_honoured():
    assert json.loads(encode_record(_rec(values=2)).jsonl)["values"] == [0, 1]
    assert json.loads(encode_record(_rec(values=ALL_VALUES)).jsonl)["values"] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(data=b"\0" * 15), "15 data bytes for shape"),
        (dict(dtype="q4_0"), "unknown dtype"),
        (dict(shape=(-1,)), "negative or non-integer"),
        (dict(layer=-1), "layer=-1 is out of range"),
        (dict(world_size=0), "world_size=0 is out of range"),
        (dict(meta={"x": [1]}), "only bool, int, float and str"),
        (dict(meta={"x": 2**63}), "does not fit in i64"),
    ],
)
def test_invalid_input_is_rejected_with_a_reason(kw, message):
    with pytest.raises(ValueError, match=message):
        encode_record(_rec(**kw))
