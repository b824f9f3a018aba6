"""Legacy per-token logits: token_idx/token_id/logits lines (gzipped or not) with metadata.json beside them."""

from __future__ import annotations

import json

from orchlog.read.paths import open_trace
from tests.tracegen import write_json_lines


def test_gzipped_logits_with_metadata_become_full_logits_records(tmp_path):
    write_json_lines(
        tmp_path / "logits.jsonl.gz",
        [{"token_idx": t, "token_id": 100 + t, "logits": [0.5, -1.0, 2.25]} for t in range(3)],
        gz=True,
    )
    (tmp_path / "metadata.json").write_text(json.dumps({"dtype": "bf16", "seed": 0, "kv_aligned": 1}))
    trace = open_trace(tmp_path / "logits.jsonl.gz")
    recs = list(trace)
    assert trace.header is not None
    assert trace.format == "legacy-logits" and trace.header["kv_aligned"] == 1
    assert [(r.checkpoint, r.token_idx, r.token_id) for r in recs] == [("logits", t, 100 + t) for t in range(3)]
    assert recs[0].values is not None
    assert recs[0].numel == 3 and recs[0].dtype == "f32" and recs[0].values.tolist() == [0.5, -1.0, 2.25]


def test_values_that_need_f64_keep_it(tmp_path):
    (rec,) = open_trace(write_json_lines(tmp_path / "l.jsonl", [{"token_idx": 0, "logits": [0.1, 0.2]}]))
    assert rec.dtype == "f64"


def test_metadata_json_beside_the_logits_is_not_a_stray_file_in_a_directory(tmp_path):
    write_json_lines(tmp_path / "logits.jsonl", [{"token_idx": 0, "token_id": 1, "logits": [1.0]}])
    (tmp_path / "metadata.json").write_text("{}")
    trace = open_trace(tmp_path)
    assert len(list(trace)) == 1 and not trace.diagnostics


def test_a_line_without_logits_is_reported(tmp_path):
    trace = open_trace(
        write_json_lines(tmp_path / "l.jsonl", [{"token_idx": 0, "logits": [1.0]}, {"token_idx": 1, "logits": "oops"}])
    )
    assert len(list(trace)) == 1 and trace.diagnostics[0].location.line == 2


def test_spelled_out_non_finite_values_are_read_beside_plain_numbers(tmp_path):
    path = write_json_lines(
        tmp_path / "l.jsonl",
        [{"token_idx": 0, "logits": [1, 2.5, "NaN", "-Infinity"]}, {"token_idx": 1, "logits": [1.0, "lots"]}],
    )
    trace = open_trace(path)
    (rec,) = list(trace)
    assert rec.values is not None
    assert rec.values[:2].tolist() == [1.0, 2.5] and str(rec.values[2]) == "nan" and rec.values[3] == float("-inf")
    assert trace.diagnostics[0].location.line == 2 and "not a number" in trace.diagnostics[0].message
