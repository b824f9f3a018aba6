"""A matrix other than prefill/decode × kv_aligned: batch 1 vs batch 8 over dtype × seed, declared in config.json,
end to end through the command line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import Any

from examples.guardrail.artifacts import Pair, Tree

CONFIG: dict[str, Any] = {
    "description": "batch 1 and batch 8 must give the same logits in f32; bf16 kernels may reorder sums",
    "run_dirs": "batching/{dtype}/seed_{seed}",
    "axes": {"dtype": ["f32", "bf16"], "seed": [0, 1]},
    "sides": ["batch_1", "batch_8"],
    "must_match": {"dtype": ["f32"]},
    "metadata": {"prompt_len": 16},
}


def _batching_tree(root, faults=None):
    tree = Tree(root, run_dirs=CONFIG["run_dirs"], sides=tuple(CONFIG["sides"]))
    tree.write_config(**CONFIG)
    for dtype in ("f32", "bf16"):
        for seed in (0, 1):
            fault = (faults or {}).get((dtype, seed), {})
            tree.write_pair(Pair({"dtype": dtype, "seed": seed}, drift=dtype == "bf16", **fault))
    return tree


def _guardrail(root, *args):
    proc = subprocess.run(
        [sys.executable, "-m", "orchlog", "guardrail", str(root), "--format", "json", *args],
        capture_output=True,
        text=True,
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else None, proc.stderr


def test_a_batch_size_matrix_passes_when_its_f32_pairs_match(tmp_path):
    code, summary, _ = _guardrail(_batching_tree(tmp_path / "ab").root)
    assert code == 0 and summary["verdict"] == "PASS_GUARDRAIL"
    assert [(p["pair"], p["must_match"], p["verdict"]) for p in summary["pairs"]] == [
        ("dtype=f32 seed=0", True, "PASS_EQUIV"),
        ("dtype=f32 seed=1", True, "PASS_EQUIV"),
        ("dtype=bf16 seed=0", False, "EXPECTED_DRIFT"),
        ("dtype=bf16 seed=1", False, "EXPECTED_DRIFT"),
    ]
    assert summary["matrix"]["sides"] == ["batch_1", "batch_8"]
    assert (tmp_path / "ab/metrics/batching/f32/seed_1_metrics.json").is_file()


def test_a_batch_size_matrix_fails_at_the_first_f32_pair_that_drifts(tmp_path):
    tree = _batching_tree(tmp_path / "ab", {("f32", 1): {"diverge_at": 2}})
    code, summary, _ = _guardrail(tree.root)
    assert code == 1 and summary["verdict"] == "FAIL_GUARDRAIL"
    assert summary["first_fail"]["pair"] == "dtype=f32 seed=1" and summary["first_fail"]["token_idx"] == 18


def test_a_missing_run_of_the_declared_matrix_makes_it_incomplete(tmp_path):
    tree = _batching_tree(tmp_path / "ab")
    shutil.rmtree(tree.root / "batching/bf16/seed_1")
    code, summary, _ = _guardrail(tree.root)
    assert code == 1 and summary["verdict"] == "INCOMPLETE"
    assert summary["missing_pairs"] == [
        {"pair": "dtype=bf16 seed=1", "axes": {"dtype": "bf16", "seed": 1}, "run_dir": "batching/bf16/seed_1"}
    ]


def test_the_same_matrix_can_come_from_a_config_file_elsewhere(tmp_path):
    tree = _batching_tree(tmp_path / "ab")
    config = tree.root / "config.json"
    moved = config.rename(tmp_path / "batching.json")
    code, summary, _ = _guardrail(tree.root, "--config", str(moved))
    assert code == 0 and summary["matrix"]["config"] == str(moved)
