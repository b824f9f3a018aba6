"""--per-token: one line per position, the first below cos-tol, the seed's JSON keys."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from orchlog.compare.per_token import compare_per_token
from orchlog.errors import OrchlogError
from orchlog.read.paths import open_trace
from orchlog.read.trace import Trace
from orchlog.report import render_text
from tests.compare.runs import run
from tests.tracegen import record, write_frames, write_json_lines, write_jsonl

SEED_KEYS = {
    "first_divergence_token",
    "per_token_cosine_sim",
    "per_token_l2_dist",
    "max_absolute_diff",
    "threshold",
    "status",
}


def _logits_files(tmp_path, drift_from=3, n=6, vocab=64) -> tuple[Trace, Trace]:
    rng = np.random.default_rng(4)
    ref = rng.standard_normal((n, vocab)) * 4
    ours = ref.copy()
    ours[drift_from:] += rng.standard_normal((n - drift_from, vocab)) * 2
    write_json_lines(
        tmp_path / "ref.jsonl.gz",
        [{"token_idx": t, "token_id": t, "logits": ref[t].tolist()} for t in range(n)],
        gz=True,
    )
    write_json_lines(
        tmp_path / "ours.jsonl.gz",
        [{"token_idx": t, "token_id": t, "logits": ours[t].tolist()} for t in reversed(range(n))],
        gz=True,
    )
    return open_trace(tmp_path / "ref.jsonl.gz"), open_trace(tmp_path / "ours.jsonl.gz")


def test_the_first_position_below_cos_tol_is_the_divergence(tmp_path):
    report = compare_per_token(*_logits_files(tmp_path), cos_tol=0.999)
    assert report.first_divergence is not None
    assert not report and report.first_divergence.token_idx == 3
    doc = report.to_json()
    assert SEED_KEYS <= set(doc) and doc["status"] == "diverged" and doc["first_divergence_token"] == 3
    assert doc["per_token_cosine_sim"][:3] == [1.0, 1.0, 1.0] and doc["per_token_cosine_sim"][3] < 0.999
    assert doc["per_token_l2_dist"][0] == 0 and doc["threshold"] == 0.999 and doc["token_idx"] == list(range(6))
    lines = render_text(report).splitlines()
    assert lines[1].startswith("ok   t=0 cosine=1.000000") and lines[4].startswith("FAIL t=3")
    assert "first divergence at token 3" in lines[5]


def test_equal_logits_pass(tmp_path):
    ref, _ = _logits_files(tmp_path)
    report = compare_per_token(ref, open_trace(tmp_path / "ref.jsonl.gz"))
    assert report and report.to_json()["first_divergence_token"] is None and report.max_absolute_diff == 0


def test_only_logits_records_of_an_orchlog_trace_take_part(tmp_path):
    a = write_frames(tmp_path / "a.bin", run())
    b = write_frames(tmp_path / "b.bin", run())
    report = compare_per_token(open_trace(a), open_trace(b), track_token=2)
    assert [p.token_idx for p in report.positions] == [0, 1, 2] and report
    assert report.to_json()["tracked_token"]["rank_a"] == report.to_json()["tracked_token"]["rank_b"]


def test_traces_without_logits_are_a_clear_error(tmp_path):
    a = write_frames(tmp_path / "a.bin", [record("attn_norm", np.ones(3, np.float32), token_idx=0)])
    with pytest.raises(OrchlogError, match="no logits records"):
        compare_per_token(open_trace(a), open_trace(a))


def test_logits_of_different_lengths_diverge_even_when_their_common_prefix_agrees(tmp_path):
    ref: list[dict[str, Any]] = [{"token_idx": t, "token_id": t, "logits": [1.0, 2.0, 3.0]} for t in range(3)]
    ours = [dict(r, logits=r["logits"] + ([0.5] if r["token_idx"] == 1 else [])) for r in ref]
    report = compare_per_token(
        open_trace(write_json_lines(tmp_path / "ref.jsonl", ref)),
        open_trace(write_json_lines(tmp_path / "ours.jsonl", ours)),
    )
    assert report.first_divergence is not None
    assert not report and report.first_divergence.token_idx == 1 and report.positions[1].diff.cosine == 1.0
    assert report.to_json()["per_token_size_mismatch"] == [False, True, False]
    assert "FAIL t=1 cosine=1.000000" in render_text(report) and "sizes 3 vs 4 (common prefix compared)" in render_text(
        report
    )


def test_positions_measured_on_leading_values_only_are_undecided_not_ok(tmp_path):
    x = np.linspace(-3, 3, 500).astype(np.float32)
    y = x.copy()
    y[400] += 1.0  # beyond the 10 leading values a summary keeps
    a = write_jsonl(tmp_path / "a.jsonl", [record("logits", x, token_idx=0)])
    b = write_jsonl(tmp_path / "b.jsonl", [record("logits", y, token_idx=0)])
    report = compare_per_token(open_trace(a), open_trace(b))
    assert report.status == "undecided" and report.exit_code == 1
    assert report.first_divergence is not None
    assert report.to_json()["per_token_verdict"] == ["undecided"] and report.first_divergence.token_idx == 0


def test_legacy_checkpoint_logits_keep_their_own_rule_on_the_values_both_sides_carry(tmp_path):
    def write(path, shift):
        doc = {
            "checkpoint": "logits",
            "team": "t",
            "token_idx": 0,
            "dtype": "f32",
            "shape": "[500]",
            "values": [0.1 * i + shift for i in range(10)],
        }
        return write_json_lines(path, [doc])

    same = compare_per_token(open_trace(write(tmp_path / "a.jsonl", 0)), open_trace(write(tmp_path / "b.jsonl", 0)))
    assert same.status == "ok" and same.to_json()["partial"] == [True]
