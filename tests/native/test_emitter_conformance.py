"""The pybind11 emitter reproduces every vector byte for byte, and the logger
behind orchlog.log writes exactly those bytes."""

from __future__ import annotations

import numpy as np
import pytest

import orchlog
from orchlog import _native, schema_gen
from orchlog.emit import api as emitter
from orchlog.encoding.record import RecordInput, encode_header, encode_record
from tests.vectors_io import header_input, meta_from_json, record_fields, record_input


def _log_call_defaults() -> dict:
    """What a log call writes for the fields the emitter sets: false flags, no reason."""
    return {f.name: False if f.type == "bool" else None for f in schema_gen.RECORD_FIELDS if f.source == "call"}


def _native_record(doc: dict) -> tuple[bytes, bytes]:
    return _native.encode_record(record_fields(doc))


def _reshape_input(doc: dict):
    """The vector's tensor as a NumPy array of its own shape (bf16 as uint16 bits)."""
    storage = schema_gen.DTYPE_NUMPY[doc["dtype"]]
    return np.frombuffer(bytes.fromhex(doc["data_hex"]), dtype=storage).reshape(doc["shape"])


def test_every_record_vector_is_reproduced_byte_for_byte(record_vectors):
    for case in record_vectors:
        jsonl, frame = _native_record(case["input"])
        assert jsonl == (case["expected"]["jsonl"] + "\n").encode(), case["name"]
        assert frame.hex() == case["expected"]["frame_hex"], case["name"]


def test_every_header_vector_is_reproduced_byte_for_byte(header_vectors):
    for case in header_vectors:
        doc = case["input"]
        jsonl, frame = _native.encode_header({**doc, "config": meta_from_json(doc["config"])})
        assert jsonl == (case["expected"]["jsonl"] + "\n").encode(), case["name"]
        assert frame.hex() == case["expected"]["frame_hex"], case["name"]


@pytest.mark.parametrize("mode", ["summary", "full"])
def test_orchlog_log_writes_the_reference_bytes_for_every_vector(record_vectors, tmp_path, monkeypatch, mode):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767323045")
    for case in record_vectors:
        doc = case["input"]
        path = tmp_path / f"{case['name']}.out"
        assert orchlog.configure(
            path=str(path),
            team=doc["team"],
            values="all" if doc["values"] == -1 else doc["values"],
            mode=mode,
            select="",
            rank=doc["rank"],
            world_size=doc["world_size"],
            model="",
            git_commit="",
        )
        checkpoint = bytes.fromhex(doc["checkpoint_hex"]) if "checkpoint_hex" in doc else doc["checkpoint"]
        assert orchlog.log(
            checkpoint,
            _reshape_input(doc),
            meta=meta_from_json(doc["meta"]),
            **{part: doc[part] for part in schema_gen.KEY_PARTS},
            dtype="bf16" if doc["dtype"] == "bf16" else None,
        )
        emitter.close()
        # a log call writes the defaults of what a graft call sets
        expected_record = encode_record(record_input({**doc, "seq": 0, **_log_call_defaults()}))
        head = header_input(
            {
                "language": "python",
                "created": "2026-01-02T03:04:05Z",
                "team": doc["team"],
                "model": None,
                "git_commit": None,
                "rank": doc["rank"],
                "world_size": doc["world_size"],
                "values": doc["values"],
                "select": None,
                "config": {},
            }
        )
        line, frame = encode_header(head)
        want = line + expected_record.jsonl if mode == "summary" else frame + expected_record.frame
        assert path.read_bytes() == want, case["name"]


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_every_half_precision_bit_pattern_encodes_like_the_reference(dtype):
    bits = np.arange(1 << 16, dtype="<u2")
    data = bits.tobytes()
    given = RecordInput(checkpoint="all_bits", dtype=dtype, shape=(1 << 16,), data=data, values=-1)
    ours = _native.encode_record(vars(given))
    want = encode_record(given)
    assert ours == (want.jsonl, want.frame)


@pytest.mark.parametrize("dtype,storage", [("f32", "<u4"), ("f64", "<u8")])
def test_random_float_bit_patterns_encode_like_the_reference(dtype, storage):
    bits = np.random.default_rng(0xF10A7).integers(0, np.iinfo(storage).max, 20000, dtype=storage, endpoint=True)
    data = bits.tobytes()
    given = RecordInput(checkpoint="random_bits", dtype=dtype, shape=(len(bits),), data=data, values=-1)
    ours = _native.encode_record(vars(given))
    want = encode_record(given)
    assert ours == (want.jsonl, want.frame)
