"""What the guardrail leaves behind: summary.json, one metrics file per pair where the seed puts them, and a
Markdown report; in the artifact directory or wherever the caller says."""

from __future__ import annotations

import json

import pytest

from orchlog.errors import OrchlogError
from orchlog.guardrail import guardrail
from orchlog.report import render_markdown, render_text
from orchlog.report.guardrail_files import write_outputs
from tests.guardrail.trees import write_matrix

SUMMARY_KEYS = {
    "report",
    "verdict",
    "meaning",
    "full_verdict",
    "directory",
    "matrix",
    "thresholds",
    "counts",
    "pairs",
    "pairing_errors",
    "missing_pairs",
    "ignored",
    "first_fail",
}


def test_summary_metrics_files_and_report_are_written_into_the_artifact_directory(tree):
    result = guardrail(write_matrix(tree, {(1, 2): {"diverge_at": 1}, (0, 1): {"span_shift": 1}}).root)
    written = write_outputs(result, tree.root)
    names = sorted(str(p.relative_to(tree.root)) for p in written)
    assert names == [
        "EQUIVALENCE_GUARDRAIL.html",
        "EQUIVALENCE_GUARDRAIL.md",
        "metrics/kv_aligned_0/seed_0_metrics.json",
        "metrics/kv_aligned_0/seed_1_metrics.json",
        "metrics/kv_aligned_0/seed_2_metrics.json",
        "metrics/kv_aligned_1/seed_0_metrics.json",
        "metrics/kv_aligned_1/seed_1_metrics.json",
        "metrics/kv_aligned_1/seed_2_metrics.json",
        "summary.json",
    ]
    summary = json.loads((tree.root / "summary.json").read_text())
    assert set(summary) == SUMMARY_KEYS and summary["verdict"] == "FAIL_GUARDRAIL"
    assert summary["counts"] == {
        "pairs": 6,
        "PASS_EQUIV": 2,
        "FAIL_EQUIV": 1,
        "EXPECTED_DRIFT": 2,
        "PAIRING_ERROR": 1,
        "INCOMPLETE": 0,
        "missing": 0,
        "undeclared": 0,
    }
    assert {e["pair"] for e in summary["pairing_errors"]} == {"kv_aligned=0 seed=1"}
    assert summary["first_fail"]["pair"] == "kv_aligned=0 seed=1"  # matrix order: kv_aligned=0 comes first


def test_a_pair_s_metrics_file_holds_every_position(tree):
    result = guardrail(write_matrix(tree, {(1, 2): {"diverge_at": 1}}).root)
    write_outputs(result, tree.root)
    doc = json.loads((tree.root / "metrics/kv_aligned_1/seed_2_metrics.json").read_text())
    assert doc["verdict"] == "FAIL_EQUIV" and doc["thresholds"]["max_abs_diff"] == 5e-3
    assert [t["token_idx"] for t in doc["per_token"]] == [16, 17, 18, 19]
    assert doc["per_token"][0]["max_abs_diff"] == 0 and doc["per_token"][1]["max_abs_diff"] == 0.25
    assert set(doc["per_token"][0]) == {
        "token_idx",
        "token_id",
        "max_abs_diff",
        "p99_abs_diff",
        "top1_match",
        "top1_a",
        "top1_b",
        "cos_sim",
        "l2",
        "kl",
    }
    assert doc["first_fail"]["token_idx"] == 17


def test_the_markdown_report_has_the_verdict_every_pair_and_the_first_fail(tree):
    result = guardrail(write_matrix(tree, {(1, 0): {"diverge_at": 2}}).root)
    md = render_markdown(result)
    assert md.startswith("# Equivalence guardrail\n\n**FAIL_GUARDRAIL**")
    assert md.count("| kv_aligned=") == 6 and "| kv_aligned=1 seed=0 | yes | FAIL_EQUIV | 4 |" in md
    assert "## First fail" in md and "`metrics/kv_aligned_1/seed_0_metrics.json`" in md


def test_outputs_go_elsewhere_when_asked_and_an_unwritable_place_is_a_clear_error(tree, tmp_path):
    result = guardrail(write_matrix(tree).root)
    write_outputs(result, tmp_path / "out")
    assert (tmp_path / "out/summary.json").is_file() and not (tree.root / "summary.json").exists()
    (tmp_path / "file").write_text("")
    with pytest.raises(OrchlogError, match="cannot write .* choose another place with --output-dir"):
        write_outputs(result, tmp_path / "file")


def test_directories_that_do_not_fit_the_layout_are_listed_not_read(tree):
    write_matrix(tree)
    (tree.root / "runs/scratch").mkdir()
    result = guardrail(tree.root)
    assert result.ignored == ["runs/scratch"] and result.verdict == "PASS_GUARDRAIL"
    assert "IGNORED (directories that do not fit runs/kv_aligned_{kv_aligned}/seed_{seed}): 1" in render_text(result)


def test_runs_beyond_the_declared_matrix_are_checked_and_marked(tree):
    write_matrix(tree, seeds=(0, 1, 2, 3), config=False)
    tree.write_config(kv_aligned=[0, 1], seeds=[0, 1, 2])
    result = guardrail(tree.root)
    extra = [p for p in result.pairs if not p.declared]
    assert [p.label for p in extra] == ["kv_aligned=0 seed=3", "kv_aligned=1 seed=3"]
    assert result.counts()["undeclared"] == 2 and "(not in config.json)" in render_text(result)
