"""open_trace: files and directories, found by content; clear errors for the rest."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.errors import OrchlogError
from orchlog.read.paths import open_trace
from tests.tracegen import record, write_frames, write_jsonl


def test_a_directory_reads_as_one_trace_in_name_order(tmp_path):
    write_jsonl(tmp_path / "rank0.jsonl", [record("a", np.ones(3, np.float32), rank=0)])
    write_frames(tmp_path / "rank1.bin", [record("a", np.ones(3, np.float32), rank=1)])
    (tmp_path / "notes.txt").write_text("not a trace\n")
    trace = open_trace(tmp_path)
    assert [r.rank for r in trace] == [0, 1]
    assert len(trace.headers) == 2
    assert any("notes.txt" in str(d) for d in trace.diagnostics)


def test_missing_empty_and_unknown_inputs_raise_one_clear_error(tmp_path):
    with pytest.raises(OrchlogError, match="does not exist"):
        open_trace(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(OrchlogError, match="is empty"):
        open_trace(tmp_path / "empty.jsonl")
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    with pytest.raises(OrchlogError, match="not a trace format"):
        open_trace(tmp_path / "x.csv")
