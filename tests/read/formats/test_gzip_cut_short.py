"""A gzipped JSON-lines trace cut short (a runner killed mid-write) keeps every whole line and says where it broke."""

from __future__ import annotations

import gzip
import json

import numpy as np

from orchlog.read.paths import open_trace
from tests.tracegen import record, write_jsonl


def _gzip_cut_short(path, drop_bytes=300):
    path.write_bytes(gzip.compress(path.read_bytes(), mtime=0)[:-drop_bytes])
    return path


def test_legacy_logits_cut_short_keep_their_whole_lines(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "logits.jsonl.gz"
    path.write_bytes(
        "".join(
            json.dumps({"token_idx": t, "logits": rng.standard_normal(8192).tolist()}) + "\n" for t in range(4)
        ).encode()
    )
    trace = open_trace(_gzip_cut_short(path))
    recs = list(trace)
    assert [r.token_idx for r in recs] == [0, 1, 2] and all(r.numel == 8192 for r in recs)
    first = trace.diagnostics[0]
    assert first.fatal and first.location.offset is not None
    assert first.message.startswith("compressed stream cut short (Compressed file ended before the end-of-stream")


def test_orchlog_jsonl_cut_short_keeps_its_whole_records(tmp_path):
    rng = np.random.default_rng(1)
    recs = [
        record("attn_norm", rng.standard_normal(4096).astype(np.float32), token_idx=t, seq=t, values=-1)
        for t in range(6)
    ]
    path = write_jsonl(tmp_path / "t.jsonl", recs)
    trace = open_trace(_gzip_cut_short(path))
    tokens = [r.token_idx for r in trace]
    assert tokens == list(range(len(tokens))) and 0 < len(tokens) < 6
    assert any(d.fatal and "compressed stream cut short" in d.message for d in trace.diagnostics)
