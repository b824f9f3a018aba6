"""Reading orchlog JSONL: records, header, and malformed lines reported by number."""

from __future__ import annotations

import gzip
import math

import numpy as np

from orchlog.read.paths import open_trace
from tests.tracegen import record, write_jsonl


def _records(n=3):
    return [record(f"c{i}", np.arange(12, dtype=np.float32) * (i + 1), seq=i, token_idx=i, layer=i) for i in range(n)]


def test_records_and_header_are_read(tmp_path):
    trace = open_trace(write_jsonl(tmp_path / "t.jsonl", _records()))
    recs = list(trace)
    assert trace.format == "orchlog-jsonl"
    assert [r.checkpoint for r in recs] == ["c0", "c1", "c2"]
    assert recs[2].values is not None
    assert recs[2].values[:3].tolist() == [0.0, 3.0, 6.0]
    assert recs[1].stats is not None
    assert recs[1].stats.max == 22.0 and recs[1].shape == (12,) and recs[1].layer == 1
    assert trace.header is not None
    assert trace.header["producer"]["language"] == "python"
    assert not recs[0].has_data and recs[0].tensor() is None


def test_malformed_lines_are_skipped_and_reported_with_their_line_number(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", _records())
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(2, b'{"checkpoint": "broken", \n')
    lines.insert(4, b"[1, 2]\n")
    path.write_bytes(b"".join(lines))
    trace = open_trace(path)
    assert [r.checkpoint for r in trace] == ["c0", "c1", "c2"]
    assert [d.location.line for d in trace.diagnostics] == [3, 5]
    assert "malformed JSON" in trace.diagnostics[0].message


def test_non_finite_values_come_back_as_floats(tmp_path):
    arr = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=np.float32)
    rec = next(iter(open_trace(write_jsonl(tmp_path / "t.jsonl", [record("x", arr)]))))
    assert rec.values is not None
    assert math.isnan(rec.values[0]) and rec.values[1] == math.inf and rec.values[2] == -math.inf
    assert math.copysign(1, rec.values[3]) < 0


def test_gzip_is_found_by_content_not_name(tmp_path):
    plain = write_jsonl(tmp_path / "t.jsonl", _records())
    (tmp_path / "trace.data").write_bytes(gzip.compress(plain.read_bytes()))
    assert len(list(open_trace(tmp_path / "trace.data"))) == 3


def test_a_line_cut_short_by_a_crash_is_reported(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", _records())
    path.write_bytes(path.read_bytes()[:-40])
    trace = open_trace(path)
    assert len(list(trace)) == 2
    # Once, as the cut record it is (not again as malformed JSON), as the binary stream reports a cut frame.
    [cut] = trace.diagnostics
    assert cut.message.startswith("truncated record: the file ends inside its last line") and cut.fatal
    assert cut.location.line == 4


def test_a_last_line_without_newline_that_is_whole_is_read_with_a_note(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", _records())
    path.write_bytes(path.read_bytes()[:-1])
    trace = open_trace(path)
    assert len(list(trace)) == 3
    [note] = trace.diagnostics
    assert "no newline" in note.message and not note.fatal
