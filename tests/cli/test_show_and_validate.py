"""`orchlog show` and `orchlog validate` on the command line."""

from __future__ import annotations

import json

from tests.cli.test_compare import _orchlog
from tests.compare.runs import run
from tests.tracegen import write_frames, write_jsonl


def test_show_lists_what_a_trace_holds(tmp_path):
    path = write_frames(tmp_path / "t.bin", run())
    proc = _orchlog("show", path)
    assert proc.returncode == 0
    for text in (
        "orchlog-binary",
        "records: 42 (42 with the whole tensor)",
        "tokens: 0-2",
        "layers: 0-2",
        "dtypes: f32 42",
        "Qcur  x9",
        "orchlog 0.1.0 (python)",
    ):
        assert text in proc.stdout, text
    doc = json.loads(_orchlog("show", path, "--format", "json").stdout)
    assert doc["tokens"] == [0, 1, 2] and doc["checkpoints"]["logits"] == 3


def test_validate_passes_a_good_trace_and_fails_a_tampered_one(tmp_path):
    good = write_frames(tmp_path / "good.bin", run())
    proc = _orchlog("validate", good, "--verify-hashes")
    assert proc.returncode == 0 and "42 hashes verified" in proc.stdout and "valid" in proc.stdout
    raw = bytearray(good.read_bytes())
    raw[-20] ^= 0xFF  # flip bits inside the last tensor's data
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(raw))
    proc = _orchlog("validate", bad, "--verify-hashes", "--format", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and not doc["valid"]
    assert any("blake3 of the data" in p["message"] for p in doc["problems"])


def test_validate_reports_malformed_jsonl_lines_and_exits_1(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", run())
    with open(path, "ab") as f:
        f.write(b"not json\n")
    proc = _orchlog("validate", path)
    assert proc.returncode == 1 and f"t.jsonl:{len(run()) + 2}: malformed JSON" in proc.stdout


def test_validate_on_missing_input_exits_2(tmp_path):
    proc = _orchlog("validate", tmp_path / "nope.bin")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
