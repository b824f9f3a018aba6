"""The weight-type peek of every compare reads a trace's first records; a directory's, its first file's.

A directory of files read as one trace gathers many files' records into its first batch: the peek at a
2,050-file SGLang dump would have parsed 512 torch files for it.
"""

from __future__ import annotations

import numpy as np

from orchlog.read import formats
from orchlog.read.paths import open_first, open_trace
from orchlog.tolerances.presets import weight_types
from tests.tracegen import record, write_jsonl


def _rank(root, rank, weight_type=None):
    meta = {"weight_type": weight_type} if weight_type else {}
    rec = record("blk.0.attn_q", np.ones(4, np.float32), rank=rank, meta=meta)
    return write_jsonl(root / f"rank{rank}.jsonl", [rec])


def test_a_directory_is_peeked_at_through_its_first_trace_file(tmp_path):
    (tmp_path / "0-notes.txt").write_text("not a trace\n")  # first in name order, but not a trace
    first = _rank(tmp_path, 0, "q4_k")
    _rank(tmp_path, 1, "q8_0")
    assert open_first(tmp_path).path == str(first)
    assert weight_types(open_trace(tmp_path)) == {"q4_k"}


def test_a_file_is_its_own_first_file(tmp_path):
    path = _rank(tmp_path, 0, "q8_0")
    assert open_first(path).path == str(path)
    assert weight_types(open_trace(path)) == {"q8_0"}


def test_a_directory_opened_already_is_not_looked_into_again(tmp_path, monkeypatch):
    """The peek reads the first member the directory's opening found: finding it again meant detecting the
    format of every file in it (0.1 s a side for a 2,050-file dump, twice a compare)."""
    for rank in range(5):
        _rank(tmp_path, rank, "q8_0")
    trace = open_trace(tmp_path)
    looked: list[str] = []
    detect = formats.detect

    def counted(path):
        looked.append(str(path))
        return detect(path)

    monkeypatch.setattr(formats, "detect", counted)
    assert weight_types(trace) == {"q8_0"}
    assert looked == [str(tmp_path / "rank0.jsonl")]
