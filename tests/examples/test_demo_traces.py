"""The bundled demo: its traces come from the committed generator, and compare names the injected bug."""

from __future__ import annotations

import shutil
import subprocess
import sys

from orchlog.compare import compare

TRACES = "examples/traces"


def test_the_committed_traces_are_what_the_generator_writes(repo_root, tmp_path):
    copy = tmp_path / "traces"
    shutil.copytree(repo_root / TRACES, copy, ignore=shutil.ignore_patterns("*.jsonl"))
    subprocess.run([sys.executable, str(copy / "make_demo_traces.py")], check=True, cwd=repo_root)
    for name in ("llama_reference.jsonl", "engine_under_test.jsonl"):
        assert (copy / name).read_bytes() == (repo_root / TRACES / name).read_bytes(), name
        assert (copy / name).stat().st_size < 1 << 20


def test_the_demo_names_token_0_and_the_first_proven_failure_layer_1_qcur(repo_root):
    report = compare(repo_root / TRACES / "llama_reference.jsonl", repo_root / TRACES / "engine_under_test.jsonl")
    assert report.exit_code == 1 and report.diverging_token == 0
    # The records' sketches prove layer 0's float32 noise within 1e-2 (the leading values and stats alone
    # left it undecided): the first pair that decides the verdict is the bug itself, proven at Qcur.
    failure = report.first
    assert failure is not None
    assert failure.tier == "fail"
    assert (failure.checkpoint, failure.layer, failure.stage, failure.token_idx) == ("Qcur", 1, None, 0)
    layer0 = next(g for g in report.growth if g.label == "layer 0")
    assert layer0.failed == 0 and report.findings.undecided == 0  # nothing fails, or is left open, before the bias goes
