"""The committed vectors are exactly what the generator makes, and they say what they claim."""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import blake3
import msgpack
import numpy as np
import pytest

from orchlog.codegen import generate_all
from orchlog.encoding import floats
from orchlog.encoding.record import encode_header, encode_record
from tests.conftest import load_vectors
from tests.vectors_io import header_input, is_nan, record_input


def _reject_constant(token):
    raise ValueError(f"bare {token} in a JSON line")


def test_generator_reproduces_committed_vectors_byte_for_byte(repo_root):
    for rel, content in generate_all().items():
        if rel.startswith("schema/vectors/"):
            assert (repo_root / rel).read_bytes() == content.encode("utf-8"), rel


def test_vectors_cover_the_edge_cases_the_format_names(record_vectors):
    names = {c["name"] for c in record_vectors}
    dtypes = {c["input"]["dtype"] for c in record_vectors}
    assert dtypes == {"f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64"}
    shapes = [c["input"]["shape"] for c in record_vectors]
    assert [] in shapes and [0] in shapes and any(len(s) >= 3 for s in shapes)
    assert any(len(c["input"]["data_hex"]) // 2 > 16 * 1024 for c in record_vectors), "several BLAKE3 chunks"
    assert {"f32_specials_all_values", "f32_empty", "unicode_checkpoint", "invalid_utf8_checkpoint"} <= names
    optional = ["token_idx", "layer", "stage", "step"]
    assert any(all(c["input"][k] is not None for k in optional) and c["input"]["meta"] for c in record_vectors)
    assert any(all(c["input"][k] is None for k in optional) and not c["input"]["meta"] for c in record_vectors)


def test_every_line_is_valid_json_without_nan_tokens(record_vectors, header_vectors):
    for case in [*record_vectors, *header_vectors]:
        json.loads(case["expected"]["jsonl"], parse_constant=_reject_constant)


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq not installed")
def test_jq_reads_every_line(record_vectors, header_vectors):
    lines = "\n".join(c["expected"]["jsonl"] for c in [*record_vectors, *header_vectors]) + "\n"
    out = subprocess.run(["jq", "-c", ".checkpoint // .orchlog"], input=lines.encode(), capture_output=True, check=True)
    assert len(out.stdout.splitlines()) == len(record_vectors) + len(header_vectors)


def test_reference_encoder_reproduces_every_case(record_vectors, header_vectors):
    for case in record_vectors:
        enc = encode_record(record_input(case["input"]))
        assert enc.jsonl == (case["expected"]["jsonl"] + "\n").encode("utf-8"), case["name"]
        assert enc.frame.hex() == case["expected"]["frame_hex"], case["name"]
    for case in header_vectors:
        line, frame = encode_header(header_input(case["input"]))
        assert line.decode() == case["expected"]["jsonl"] + "\n"
        assert frame.hex() == case["expected"]["frame_hex"]


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(b, str) and isinstance(a, float) and not math.isfinite(a):
        return b == ("NaN" if math.isnan(a) else ("Infinity" if a > 0 else "-Infinity"))
    if is_nan(a) or is_nan(b):
        return is_nan(a) and is_nan(b)
    if isinstance(a, float) or isinstance(b, float):
        # ECMAScript prints 2**63 as 9223372036854776000, which json reads as an int.
        return float(a) == float(b)
    return a == b


def test_frames_hold_the_same_fields_as_lines_plus_the_data(record_vectors):
    for case in record_vectors:
        frame = msgpack.unpackb(bytes.fromhex(case["expected"]["frame_hex"]), raw=False, strict_map_key=False)
        line = json.loads(case["expected"]["jsonl"])
        data = frame.pop("data")
        frame.pop("crc32c")  # the frame checksum: tests/encoding/test_frame_checksum.py
        assert list(frame) == list(line), case["name"]
        # JSONL writes the sketch's f32 bits in hex; the frame holds the float32 itself.
        assert frame.pop("sketch") == floats.from_hex_bits(line.pop("sketch"), 64, "f32"), case["name"]
        if line["dtype"] in ("f32", "f16", "bf16"):
            # JSON prints the shortest f32 digits; the frame holds the float32 itself.
            narrow = [v if isinstance(v, str) else float(np.float32(v)) for v in line["values"]]
            assert _same(frame.pop("values"), narrow), case["name"]
            line.pop("values")
        assert _same(frame, line), case["name"]
        assert data == bytes.fromhex(case["input"]["data_hex"])
        assert blake3.blake3(data).hexdigest() == case["expected"]["blake3"] == line["blake3"]


def test_json_values_round_trip_exactly_in_their_dtype(record_vectors):
    for case in record_vectors:
        dtype = case["input"]["dtype"]
        if dtype not in ("f32", "f64"):
            continue
        line = json.loads(case["expected"]["jsonl"])
        raw = np.frombuffer(bytes.fromhex(case["input"]["data_hex"]), dtype="<f4" if dtype == "f32" else "<f8")
        for printed, stored in zip(line["values"], raw):
            if isinstance(printed, str):
                assert not np.isfinite(stored)
            else:
                assert np.array(printed, dtype=raw.dtype).tobytes() == stored.tobytes(), (case["name"], printed)


def test_signalling_nan_bits_survive_into_the_frame(record_vectors):
    case = next(c for c in record_vectors if c["name"] == "f32_specials_all_values")
    frame = bytes.fromhex(case["expected"]["frame_hex"])
    assert b"\xca\x7f\x80\x00\x01" in frame  # float32 with the signalling NaN's exact bits
    f16 = next(c for c in record_vectors if c["name"] == "f16_specials_all_values")
    # f16 0x7d00 (signalling) widens to f32 0x7fa00000: payload shifted by 13, no quiet bit added.
    assert b"\xca\x7f\xa0\x00\x00" in bytes.fromhex(f16["expected"]["frame_hex"])


def test_lane_order_vector_would_catch_a_naive_sum(record_vectors):
    case = next(c for c in record_vectors if c["name"] == "stats_lane_order")
    x = np.frombuffer(bytes.fromhex(case["input"]["data_hex"]), dtype="<f8")
    naive = 0.0
    for v in x:
        naive += float(v)
    expected = json.loads(case["expected"]["jsonl"])["stats"]["mean"]
    assert naive / len(x) != expected


def test_official_blake3_vectors_agree_with_the_blake3_package():
    doc = load_vectors("blake3_official.json")
    assert len(doc["cases"]) >= 20
    for case in doc["cases"]:
        data = bytes(i % 251 for i in range(case["input_len"]))
        assert blake3.blake3(data).hexdigest() == case["hash"]
        assert blake3.blake3(data).hexdigest(length=len(case["extended_hash"]) // 2) == case["extended_hash"]
