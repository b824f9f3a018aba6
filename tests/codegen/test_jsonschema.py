"""The generated JSON Schema accepts every vector line and rejects malformed ones."""

from __future__ import annotations

import json

import jsonschema
import pytest


@pytest.fixture(scope="module")
def validator(repo_root):
    doc = json.loads((repo_root / "schema/orchlog.jsonl.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


def test_every_record_vector_line_validates(validator, record_vectors):
    for case in record_vectors:
        errors = list(validator.iter_errors(json.loads(case["expected"]["jsonl"])))
        assert not errors, (case["name"], [e.message for e in errors])


def test_every_header_vector_line_validates(validator, header_vectors):
    for case in header_vectors:
        assert validator.is_valid(json.loads(case["expected"]["jsonl"])), case["name"]


@pytest.mark.parametrize(
    "mutate, why",
    [
        (lambda r: r.pop("blake3"), "a missing field"),
        (lambda r: r.update(extra=1), "an unknown field"),
        (lambda r: r.update(blake3="ABC"), "a hash that is not 64 lowercase hex digits"),
        (lambda r: r.update(dtype="q4_0"), "an unknown dtype"),
        (lambda r: r.update(shape="[896]"), "a shape given as a string (the legacy form)"),
        (lambda r: r["values"].append("nan"), "a non-finite spelling other than NaN/Infinity/-Infinity"),
        (lambda r: r.update(layer=-1), "a negative layer"),
        (lambda r: r["meta"].update(nested={"a": 1}), "a meta value that is not a scalar"),
        (lambda r: r["stats"].update(nan_count=None), "a null count"),
    ],
)
def test_malformed_records_are_rejected(validator, record_vectors, mutate, why):
    record = json.loads(record_vectors[0]["expected"]["jsonl"])
    mutate(record)
    assert not validator.is_valid(record), why
