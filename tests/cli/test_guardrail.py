"""`orchlog guardrail` on the command line: exit codes per verdict, formats, flags, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from examples.guardrail.artifacts import Tree
from tests.guardrail.trees import write_matrix


def _orchlog(*args):
    return subprocess.run(
        [sys.executable, "-m", "orchlog", "guardrail", *map(str, args)], capture_output=True, text=True
    )


@pytest.fixture
def tree(tmp_path):
    return Tree(tmp_path / "artifacts")


@pytest.mark.parametrize(
    "faults, kw, verdict, code",
    [
        ({}, {}, "PASS_GUARDRAIL", 0),
        ({}, {"config": False}, "PASS_GUARDRAIL_LOCAL", 0),
        ({}, {"kv_aligned": (0,)}, "EXPECTED_DRIFT_ONLY", 0),
        ({(1, 1): {"diverge_at": 0}}, {}, "FAIL_GUARDRAIL", 1),
        ({(1, 1): {"missing": "side"}}, {}, "INCOMPLETE", 1),  # the side never ran
        ({(1, 1): {"missing": "metadata"}}, {}, "FAIL_GUARDRAIL", 1),  # it ran, but cannot be compared
    ],
)
def test_each_verdict_has_its_exit_code_and_json_names_it(tree, faults, kw, verdict, code):
    write_matrix(tree, faults, **kw)
    proc = _orchlog(tree.root, "--format", "json")
    assert proc.returncode == code and proc.stderr == ""
    assert json.loads(proc.stdout)["verdict"] == verdict


def test_an_incomplete_matrix_exits_1(tree):
    write_matrix(tree, seeds=(0,))
    tree.write_config(kv_aligned=[0, 1], seeds=[0, 1])
    proc = _orchlog(tree.root)
    assert proc.returncode == 1 and proc.stdout.rstrip().endswith(
        "VERDICT: INCOMPLETE (declared pairs are missing, or a side of a pair never ran)"
    )


def test_the_text_report_and_the_files_are_written_by_default_into_dir(tree):
    proc = _orchlog(write_matrix(tree).root)
    assert proc.returncode == 0 and proc.stdout.startswith(f"=== orchlog guardrail: {tree.root} ===")
    assert (tree.root / "summary.json").is_file() and (tree.root / "EQUIVALENCE_GUARDRAIL.md").is_file()
    assert json.loads((tree.root / "summary.json").read_text())["verdict"] == "PASS_GUARDRAIL"


def test_output_dir_and_markdown(tree, tmp_path):
    proc = _orchlog(write_matrix(tree).root, "--output-dir", tmp_path / "out", "--format", "md")
    assert proc.stdout == (tmp_path / "out/EQUIVALENCE_GUARDRAIL.md").read_text()
    assert (tmp_path / "out/metrics/kv_aligned_1/seed_2_metrics.json").is_file()
    assert not (tree.root / "summary.json").exists()


def test_threshold_flags_override_config_json(tree):
    write_matrix(tree, kv_aligned=(1,), faults={(1, 0): {"drift": True}})
    assert _orchlog(tree.root, "-q").returncode == 1
    proc = _orchlog(tree.root, "--max-abs-diff", "0.5", "--p99-abs-diff", "0.5", "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["thresholds"]["p99_abs_diff"] == 0.5


def test_help_shows_an_example():
    proc = _orchlog("--help")
    assert proc.returncode == 0 and "orchlog guardrail examples/guardrail" in proc.stdout
    assert "--max-abs-diff" in proc.stdout and "exit codes:" in proc.stdout


def test_errors_exit_2_with_one_line(tree, tmp_path):
    write_matrix(tree)
    (tmp_path / "empty").mkdir()
    bad_config = tmp_path / "bad.json"
    bad_config.write_text('{"kv_aligned": [0, 1], "seeds": }')
    cases = [
        ([tmp_path / "nope"], "does not exist"),
        ([tmp_path / "empty"], "no run directories like"),
        ([tree.root, "--config", bad_config], "bad.json:1: malformed JSON"),
        ([tree.root, "--max-abs-diff", "-1"], "must be >= 0"),
        ([tree.root, "--p99-abs-diff", "inf"], "threshold p99_abs_diff must be a non-negative number"),
        ([tree.root, "--output-dir", tree.root / "config.json"], "cannot write"),
    ]
    for args, message in cases:
        proc = _orchlog(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
