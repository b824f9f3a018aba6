"""The pybind11 emitter reproduces every vector byte for byte, and the logger
behind orchlog.log writes exactly those bytes."""

from __future__ import annotations

import numpy as np
import pytest

import orchlog
from orchlog import _native
from orchlog.emit import api as emitter
from orchlog.encoding.record import RecordInput, encode_header, encode_record
from tests.vectors_io import header_input, meta_from_json, record_input


def _native_record(doc: dict) -> tuple[bytes, bytes]:
    checkpoint = bytes.fromhex(doc["checkpoint_hex"]) if "checkpoint_hex" in doc else doc["checkpoint"]
    return _native.encode_record(
        checkpoint,
        bytes.fromhex(doc["data_hex"]),
        doc["dtype"],
        doc["shape"],
        doc["team"],
        doc["token_idx"],
        doc["layer"],
        doc["stage"],
        doc["step"],
        doc["rank"],
        doc["world_size"],
        doc["seq"],
        doc["values"],
        meta_from_json(doc["meta"]),
    )


def _reshape_input(doc: dict):
    """The vector's tensor as a NumPy array of its own shape (bf16 as uint16 bits)."""
    storage = {
        "f32": "<f4",
        "f16": "<f2",
        "bf16": "<u2",
        "f64": "<f8",
        "i8": "i1",
        "u8": "u1",
        "i32": "<i4",
        "i64": "<i8",
    }[doc["dtype"]]
    return np.frombuffer(bytes.fromhex(doc["data_hex"]), dtype=storage).reshape(doc["shape"])


def test_every_record_vector_is_reproduced_byte_for_byte(record_vectors):
    for case in record_vectors:
        jsonl, frame = _native_record(case["input"])
        assert jsonl == (case["expected"]["jsonl"] + "\n").encode(), case["name"]
        assert frame.hex() == case["expected"]["frame_hex"], case["name"]


def test_every_header_vector_is_reproduced_byte_for_byte(header_vectors):
    for case in header_vectors:
        doc = case["input"]
        jsonl, frame = _native.encode_header(
            doc["language"],
            doc["created"],
            doc["team"],
            doc["model"],
            doc["git_commit"],
            doc["rank"],
            doc["world_size"],
            doc["values"],
            doc["select"],
            meta_from_json(doc["config"]),
        )
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
            token_idx=doc["token_idx"],
            layer=doc["layer"],
            stage=doc["stage"],
            step=doc["step"],
            meta=meta_from_json(doc["meta"]),
            dtype="bf16" if doc["dtype"] == "bf16" else None,
        )
        emitter.close()
        expected_record = encode_record(record_input({**doc, "seq": 0}))
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
    ours = _native.encode_record("all_bits", data, dtype, [1 << 16], "", None, None, None, None, 0, 1, 0, -1, {})
    want = encode_record(RecordInput(checkpoint="all_bits", dtype=dtype, shape=(1 << 16,), data=data, values=-1))
    assert ours == (want.jsonl, want.frame)


@pytest.mark.parametrize("dtype,storage", [("f32", "<u4"), ("f64", "<u8")])
def test_random_float_bit_patterns_encode_like_the_reference(dtype, storage):
    bits = np.random.default_rng(0xF10A7).integers(0, np.iinfo(storage).max, 20000, dtype=storage, endpoint=True)
    data = bits.tobytes()
    ours = _native.encode_record("random_bits", data, dtype, [len(bits)], "", None, None, None, None, 0, 1, 0, -1, {})
    want = encode_record(RecordInput(checkpoint="random_bits", dtype=dtype, shape=(len(bits),), data=data, values=-1))
    assert ours == (want.jsonl, want.frame)
