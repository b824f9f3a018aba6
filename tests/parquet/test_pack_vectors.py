"""Every conformance vector, as the exact frames emitters write, packs to rows that say what its JSONL says."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.parquet as pq

from orchlog import schema_gen
from orchlog.encoding.record import encode_header
from orchlog.encoding.text import json_string
from orchlog.parquet import pack, read
from orchlog.parquet.schema import FIELD_OF
from tests.tracegen import header, raw_of, tensor_of


def _stream(tmp_path, record_vectors):
    path = tmp_path / "vectors.bin"
    frames = [bytes.fromhex(c["expected"]["frame_hex"]) for c in record_vectors]
    path.write_bytes(encode_header(header())[1] + b"".join(frames))
    return path


def _same_number(a, b) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and (a == b or (math.isnan(a) and math.isnan(b)))
    )


def _json_number(v):
    """A JSONL number as the f64 it stands for (large floats print without an exponent, so json reads ints)."""
    if v is None:
        return None
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v] if isinstance(v, str) else float(v)


def test_vector_frames_pack_to_rows_matching_their_jsonl(tmp_path, record_vectors):
    result = pack([_stream(tmp_path, record_vectors)], tmp_path / "v.parquet")
    assert result and result.records == len(record_vectors)
    rows = [{FIELD_OF[c]: v for c, v in row.items()} for row in pq.read_table(tmp_path / "v.parquet").to_pylist()]
    for case, row in zip(record_vectors, rows, strict=True):
        line = case["expected"]["jsonl"]
        doc = json.loads(line)
        for key in (*schema_gen.KEY_FIELDS, *schema_gen.CALL_FIELDS, "shape", "numel", "blake3"):
            assert row[key] == doc[key], (case["name"], key)
        assert row["dtype"] == schema_gen.DTYPE_PARQUET[doc["dtype"]], case["name"]
        assert row["data"] == bytes.fromhex(case["input"]["data_hex"]), case["name"]
        for key, value in doc["stats"].items():
            assert _same_number(row[key], _json_number(value)), (case["name"], key)
        # JSONL prints f32/f16/bf16 values by their shortest f32 digits; Parquet holds them widened to f64
        precision = np.float32 if doc["dtype"] in ("f32", "f16", "bf16") else np.float64
        expected_values = [float(precision(v)) if isinstance(v, float) else float(v) for v in doc["values"]]
        assert all(_same_number(a, b) for a, b in zip(row["values"], expected_values, strict=True)), case["name"]
        # meta values are the exact canonical JSON text of the JSONL line
        meta_text = "{" + ",".join(f"{json_string(k)}:{v}" for k, v in row["meta"]) + "}"
        assert line[line.rindex('"meta":') :].startswith(f'"meta":{meta_text},'), case["name"]


def test_vector_tensors_read_back_as_their_bytes(tmp_path, record_vectors):
    pack([_stream(tmp_path, record_vectors)], tmp_path / "v.parquet")
    for case, rec in zip(record_vectors, read(tmp_path / "v.parquet"), strict=True):
        assert bytes(raw_of(rec)) == bytes.fromhex(case["input"]["data_hex"]), case["name"]
        assert tensor_of(rec).size == int(np.prod(case["input"]["shape"], dtype=np.int64)), case["name"]
