"""`orchlog compare` on the command line: exit codes, formats, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from tests.compare.runs import from_layer, run
from tests.tracegen import write_frames, write_jsonl


def _orchlog(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "orchlog", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def _pair(tmp_path, bug=None):
    return write_jsonl(tmp_path / "a.jsonl", run()), write_frames(tmp_path / "b.bin", run(bug=bug))


def test_identical_traces_exit_0(tmp_path):
    a, b = _pair(tmp_path)
    proc = _orchlog("compare", a, b)
    assert proc.returncode == 0 and "RESULT: ok" in proc.stdout and proc.stderr == ""


def test_a_divergence_exits_1_and_names_it_and_its_malformed_lines(tmp_path):
    a, b = _pair(tmp_path, from_layer(2, 1, "ffn_out"))
    with open(a, "ab") as f:
        f.write(b'{"checkpoint": \n')
    proc = _orchlog("compare", a, b)
    assert proc.returncode == 1
    assert "FIRST DIVERGENCE: token 2" in proc.stdout and "ffn_out, layer 1, token 2" in proc.stdout
    assert f"a.jsonl:{len(run()) + 2}: malformed JSON" in proc.stdout


def test_json_goes_to_output_file_and_parses(tmp_path):
    a, b = _pair(tmp_path, from_layer(0, 0, "Qcur"))
    out = tmp_path / "report.json"
    proc = _orchlog("compare", a, b, "--format", "json", "--output", out, "--quiet")
    assert proc.returncode == 1 and proc.stdout == ""
    doc = json.loads(out.read_text())
    assert doc["status"] == "diverged" and doc["first_divergence"]["checkpoint"] == "Qcur"


def test_markdown_and_per_token_modes(tmp_path):
    a, b = _pair(tmp_path, from_layer(1, 0, "Qcur"))
    assert _orchlog("compare", a, b, "--format", "md").stdout.startswith("# orchlog compare")
    proc = _orchlog("compare", a, b, "--per-token", "--format", "json")
    # a's logits are summaries (10 of 40 values): no position is proven either way, so token 0 is undecided.
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["status"] == "undecided" and doc["first_divergence_token"] == 0
    whole = write_frames(tmp_path / "a.bin", run())
    doc = json.loads(_orchlog("compare", whole, b, "--per-token", "--format", "json").stdout)
    assert doc["first_divergence_token"] == 1 and doc["per_token_verdict"] == ["ok", "fail", "fail"]


def test_unreadable_input_exits_2_with_one_line(tmp_path):
    a, _ = _pair(tmp_path)
    garbage = tmp_path / "garbage.dat"
    garbage.write_bytes(bytes(range(256)))
    for args in (
        [a, tmp_path / "missing.jsonl"],
        [a, garbage],
        [a, a, "--map", "nope"],
        [a, a, "--key", "colour"],
        [a, a, "--threshold", "-1"],
        [a, a, "--tolerances", tmp_path],
        [a, a, "--dump-all"],
        [a, a, "--per-token", "--dump-raw", tmp_path],
    ):
        proc = _orchlog("compare", *args)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, (args, proc.stderr)


def test_dump_raw_writes_npy_files(tmp_path):
    a, b = write_frames(tmp_path / "a.bin", run()), write_frames(tmp_path / "b.bin", run(bug=from_layer(0, 2, "l_out")))
    proc = _orchlog("compare", a, b, "--dump-raw", tmp_path / "dump", "--quiet")
    assert proc.returncode == 1
    arrays = [np.load(p, allow_pickle=False) for p in sorted((tmp_path / "dump").iterdir())]
    assert len(arrays) == 2 and arrays[0].shape == arrays[1].shape
