"""Legacy checkpoint JSONL: shape as a string, first N values, no hash."""

from __future__ import annotations

import math

from orchlog.read.paths import open_trace
from tests.tracegen import write_json_lines


def _line(**kw):
    doc = {
        "checkpoint": "embedding",
        "team": "llama.cpp",
        "token_idx": 0,
        "dtype": "f32",
        "shape": "[896]",
        "values": [0.5, -1.25, 2.0],
    }
    doc.update(kw)
    return doc


def test_lines_become_records_with_the_shape_parsed(tmp_path):
    path = write_json_lines(
        tmp_path / "llama_hidden_states.jsonl", [_line(), _line(checkpoint="logits", shape="[1, 151936]")]
    )
    trace = open_trace(path)
    recs = list(trace)
    assert trace.format == "legacy-checkpoint-jsonl"
    assert recs[0].values is not None
    assert recs[0].shape == (896,) and recs[0].numel == 896 and recs[0].values.tolist() == [0.5, -1.25, 2.0]
    assert recs[1].shape == (1, 151936) and recs[0].team == "llama.cpp" and recs[0].blake3 is None


def test_c_printf_non_finite_spellings_are_read(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"checkpoint": "x", "team": "t", "token_idx": 1, "dtype": "f32", "shape": "[3]", "values": [nan, -inf, inf]}\n'
    )
    (rec,) = open_trace(path)
    assert rec.values is not None
    assert math.isnan(rec.values[0]) and rec.values[1] == -math.inf and rec.values[2] == math.inf


def test_broken_lines_are_reported_with_their_numbers_and_skipped(tmp_path):
    path = write_json_lines(tmp_path / "t.jsonl", [_line(), _line(token_idx=1)])
    path.write_text(path.read_text() + '{"checkpoint": "x", "values": [1, 2\n' + '{"team": "no checkpoint"}\n')
    trace = open_trace(path)
    assert [r.token_idx for r in trace] == [0, 1]
    assert [d.location.line for d in trace.diagnostics] == [3, 4]
