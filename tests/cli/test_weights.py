"""`orchlog weights` on the command line: exit codes, formats, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from tests.weights.models import gguf_weights, write_gguf, write_hf


def _orchlog(*args):
    return subprocess.run([sys.executable, "-m", "orchlog", *map(str, args)], capture_output=True, text=True)


def test_matching_weights_exit_0_and_a_transposed_one_exits_1(tmp_path):
    w = gguf_weights()
    a = write_gguf(tmp_path / "m.gguf", w)
    proc = _orchlog("weights", a, write_hf(tmp_path / "same.safetensors", w))
    assert proc.returncode == 0 and "RESULT: ok, all" in proc.stdout and proc.stderr == ""
    bad = {**w, "blk.0.ffn_up.weight": np.ascontiguousarray(w["blk.0.ffn_up.weight"].T)}
    proc = _orchlog("weights", a, write_hf(tmp_path / "bad.safetensors", bad), "--format", "json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["status"] == "diverged" and doc["counts"]["relations"]["transposed"] == 1


def test_markdown_goes_to_a_file(tmp_path):
    w = gguf_weights()
    out = tmp_path / "r.md"
    proc = _orchlog(
        "weights",
        write_gguf(tmp_path / "m.gguf", w),
        write_hf(tmp_path / "m.safetensors", w),
        "-o",
        out,
        "--format",
        "md",
    )
    assert proc.returncode == 0 and proc.stdout == "" and out.read_text().startswith("# orchlog weights")


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "junk").write_bytes(b"not weights at all")
    proc = _orchlog("weights", tmp_path / "junk", tmp_path / "junk")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "not a GGUF, safetensors or .npz" in proc.stderr
    a = write_gguf(tmp_path / "m.gguf", gguf_weights())
    proc = _orchlog("weights", a, a, "--map", "no_such_map")
    assert proc.returncode == 2 and "--map no_such_map: no such file" in proc.stderr
