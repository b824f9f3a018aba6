"""overview(): counts, spans and producers of a trace, whatever its format."""

from __future__ import annotations

import numpy as np

from orchlog.read.overview import _span, overview
from orchlog.read.paths import open_trace
from tests.compare.runs import run
from tests.tracegen import record, write_json_lines, write_jsonl


def test_spans_read_like_ranges():
    assert _span({0, 1, 2, 5, 7, 8}) == "0-2, 5, 7-8" and _span(set()) == "none"


def test_an_orchlog_trace_is_summarised(tmp_path):
    recs = run(tokens=2, layers=2) + [record("kv", np.ones(2, np.float16), step=3, rank=1, world_size=2)]
    s = overview(open_trace(write_jsonl(tmp_path / "t.jsonl", recs)))
    assert s.records == len(recs) and s.with_data == 1  # the 2-element kv record carries every value
    assert list(s.checkpoints)[:3] == ["embedding", "attn_norm", "Qcur"] and s.checkpoints["logits"] == 2
    assert s.tokens == {0, 1} and s.layers == {0, 1} and s.steps == {3} and s.ranks == {0, 1}
    assert s.dtypes == {"f32": len(recs) - 1, "f16": 1} and s.records_without_token == 1
    assert "orchlog 0.1.0 (python)" in str(s)


def test_a_legacy_trace_says_it_has_no_orchlog_header(tmp_path):
    path = write_json_lines(tmp_path / "l.jsonl", [{"token_idx": 0, "logits": [1.0, 2.0]}])
    s = overview(open_trace(path))
    assert s.with_data == 1 and "no orchlog header" not in str(s)
    assert s.to_json()["producers"] == []
