"""`orchlog graft-report` on the command line: exit codes, formats, several runs, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.graft_report.grafted_runs import write_run


def _orchlog(*args):
    return subprocess.run([sys.executable, "-m", "orchlog", *map(str, args)], capture_output=True, text=True)


def test_a_bug_exits_1_and_names_its_stage_and_a_clean_run_exits_0(tmp_path):
    ref = write_run(tmp_path / "ref.bin", 2, 2)
    bug = {(1, "ffn_out"): 5e-3}
    grafted = write_run(tmp_path / "g.bin", 2, 2, bug, {"attn_out"})
    plain = write_run(tmp_path / "plain.bin", 2, 2, bug)
    proc = _orchlog("graft-report", ref, grafted, "--plain", plain, "--threshold", "1e-3")
    assert proc.returncode == 1 and proc.stderr == ""
    assert "largest local error: ffn_out @ layer 1" in proc.stdout
    clean = write_run(tmp_path / "clean.bin", 2, 2, {}, {"attn_out"})
    assert _orchlog("graft-report", ref, clean, "--threshold", "1e-3", "-q").returncode == 0


def test_several_runs_go_into_one_json_report_written_to_a_file(tmp_path):
    ref = write_run(tmp_path / "ref.bin", 2, 1)
    bug = {(0, "l_out"): 5e-3}
    runs = [write_run(tmp_path / f"g{i}.bin", 2, 1, bug, {s}) for i, s in enumerate(("attn_norm", "ffn_out"))]
    out = tmp_path / "report.json"
    proc = _orchlog("graft-report", ref, *runs, "--threshold", "1e-3", "--format", "json", "-o", out)
    assert proc.returncode == 1 and proc.stdout == ""
    doc = json.loads(out.read_text())
    assert [g["path"] for g in doc["coverage"]["grafted"]] == [str(r) for r in runs]
    row = next(s for s in doc["stages"] if s["checkpoint"] == "l_out" and s["layer"] == 0)
    assert row["local"]["run"] == 1 and row["local"]["hops"] == 0 and row["verdict"] == "introduced"


def test_an_unreadable_input_is_one_line_and_exit_2(tmp_path):
    ref = write_run(tmp_path / "ref.bin", 1, 1)
    proc = _orchlog("graft-report", ref, tmp_path / "missing.bin")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("orchlog: error:")


def test_help_shows_an_example():
    proc = _orchlog("graft-report", "--help")
    assert proc.returncode == 0 and "example:" in proc.stdout and "--plain" in proc.stdout
