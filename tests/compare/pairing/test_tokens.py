"""Token ids: when both traces say which token each position holds, compare checks them first and
names the first position where the prompts differ (seed 004: one side prepends a BOS);
--token-offset lines a shifted side up."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.compare.pairing.tokens import TokenIds, first_difference, shift_positions, token_id_of, token_ids
from orchlog.compare.per_token import compare_per_token
from orchlog.read.batch import NONE, RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.trace import TraceRecord
from orchlog.report import render_text
from tests.tracegen import write_json_lines

BOS = 151643
PROMPT = [785, 6722, 315, 9625, 374]  # "The capital of France is"


def _logits(tmp_path, name, ids, rows):
    docs = [{"token_idx": p, "token_id": t, "logits": row.tolist()} for p, (t, row) in enumerate(zip(ids, rows))]
    return write_json_lines(tmp_path / f"{name}.jsonl", docs)


def _bos_pair(tmp_path):
    """llama.cpp's run with a BOS (a) and HF's without (b): b's position p is a's p + 1."""
    rows = np.random.default_rng(4).standard_normal((len(PROMPT) + 1, 32)).astype(np.float32)
    a = _logits(tmp_path, "with_bos", [BOS, *PROMPT], rows)
    b = _logits(tmp_path, "without_bos", PROMPT, rows[1:])
    return a, b


def test_a_records_token_id_is_its_field_and_else_for_older_traces_its_meta():
    batch = RecordBatch.from_records(
        [
            TraceRecord("x", token_idx=0, token_id=7, meta={"token_id": 8}),  # the field wins
            TraceRecord("x", token_idx=1, meta={"token_id": 9}),
            TraceRecord("x", token_idx=2, meta={"token_id": True}),  # not an id
            TraceRecord("y"),
        ]
    )
    assert token_ids(batch).tolist() == [7, 9, NONE, NONE]
    assert [token_id_of(batch, i) for i in range(4)] == [7, 9, None, None]


def test_token_ids_written_by_the_emitter_are_read_back_from_every_encoding(tmp_path):
    import orchlog

    for mode, name in (("summary", "t.jsonl"), ("full", "t.bin")):
        orchlog.configure(path=str(tmp_path / name), mode=mode, select="")
        for position, token in enumerate(PROMPT):
            orchlog.log("embd", np.ones(4, np.float32), token_idx=position, token_id=token)
        orchlog.close()
        batch = RecordBatch.concat(list(open_trace(tmp_path / name).batches()))
        assert token_ids(batch).tolist() == PROMPT, mode


def test_shifting_positions_leaves_records_without_one_alone():
    batch = RecordBatch.from_records([TraceRecord("x", token_idx=0), TraceRecord("y")])
    assert shift_positions(batch, 2).token_idx.tolist() == [2, NONE]


def test_the_first_differing_position_is_named_and_positions_only_one_side_has_are_not_differences():
    a, b = TokenIds(), TokenIds()
    a.ids, b.ids = {0: 1, 1: 2, 2: 3, 5: 9}, {1: 2, 2: 4, 3: 8}
    m = first_difference(a, b)
    assert m is not None
    assert (m.position, m.a, m.b) == (2, 3, 4)
    assert m.describe() == "token ids differ at position 2 (a: 3, b: 4)"


def test_a_prepended_bos_is_reported_as_different_prompts_not_as_a_divergence(tmp_path):
    a, b = _bos_pair(tmp_path)
    report = compare(a, b)
    assert report.status == "tokens_differ" and report.exit_code == 1 and report.first is None
    assert "token ids differ at position 0 (a: 151643, b: 785)" in render_text(report)
    assert report.to_json()["token_ids"]["first_difference"] == {"position": 0, "a": BOS, "b": 785}


def test_token_offset_lines_the_shifted_side_up(tmp_path):
    a, b = _bos_pair(tmp_path)
    report = compare(a, b, CompareOptions(token_offset=1))
    assert report.status == "ok" and report.tokens.positions == len(PROMPT)
    assert f"the same at all {len(PROMPT)} positions" in render_text(report)
    assert [u.key["token_idx"] for u in report.unmatched] == [0]  # the BOS, only in a
    assert compare(b, a, CompareOptions(token_offset=-1)).status == "ok"


def test_per_token_logits_check_the_token_ids_too(tmp_path):
    a, b = _bos_pair(tmp_path)
    report = compare_per_token(open_trace(a), open_trace(b))
    assert report.status == "tokens_differ" and report.exit_code == 1
    assert "token ids differ at position 0" in render_text(report)
    assert compare_per_token(open_trace(a), open_trace(b), token_offset=1).status == "ok"


def test_the_command_line_says_where_the_prompts_differ_and_exits_1(tmp_path):
    a, b = _bos_pair(tmp_path)
    run = lambda *extra: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "orchlog", "compare", str(a), str(b), *extra], capture_output=True, text=True
    )
    proc = run()
    assert proc.returncode == 1 and "RESULT: token ids differ at position 0 (a: 151643, b: 785)" in proc.stdout
    assert run("--token-offset", "1").returncode == 0
    assert run("--token-offset", "1", "--per-token").returncode == 0
