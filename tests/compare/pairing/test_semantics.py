"""Formats' own rules: legacy trace records diverge on a hash difference, legacy checkpoint JSONL grades the
values both sides carry, and --exact makes any hash difference fail everywhere."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.compare.pairing.semantics import semantics
from orchlog.encoding.record import ALL_VALUES
from orchlog.report import render_text
from tests.tracegen import record, write_json_lines, write_jsonl

RUST_HASH = "407a12f3abc98d12" + "0" * 48
CPP_HASH = "19b4ce8d01234abc" + "0" * 48


def _trace_dir(root, layer6_hash, layer6_rms):
    """Seed 001's traces: one pretty-printed record per .trace file, seq 0, layers 0..7, stage attn_out."""
    root.mkdir()
    for layer in range(8):
        differs = layer >= 6
        doc = {
            "name": "attn_out",
            "shape": [2560],
            "dtype": "f32",
            "blake3": (layer6_hash if differs else f"{layer:x}" * 64)[:64],
            "rms": layer6_rms if differs else 0.5 + layer / 10,
            "num_elements": 2560,
            "seq": 0,
            "layer": layer,
            "stage": "attn_out",
        }
        (root / f"layer{layer}.trace").write_text(json.dumps(doc, indent=2))
    return root


def test_seed_001s_example_pair_reports_seq_0_layer_6_attn_out_and_exits_1(tmp_path):
    rust = _trace_dir(tmp_path / "rust", RUST_HASH, 0.9123)
    cpp = _trace_dir(tmp_path / "cpp", CPP_HASH, 0.913)
    proc = subprocess.run([sys.executable, "-m", "orchlog", "compare", rust, cpp], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FIRST DIVERGENCE: token 0" in proc.stdout and "\n  attn_out, layer 6, token 0\n" in proc.stdout
    assert f"blake3 a {RUST_HASH}  b {CPP_HASH}; rms 0.9123 vs 0.913; num_elements 2560 vs 2560" in proc.stdout
    assert "RESULT: diverged: 2 pairs fail" in proc.stdout


def test_a_hash_difference_with_equal_rms_is_a_divergence_even_at_threshold_0(tmp_path):
    a = _trace_dir(tmp_path / "a", RUST_HASH, 0.9)
    b = _trace_dir(tmp_path / "b", CPP_HASH, 0.9)  # a permutation keeps the rms; the hash sees it
    report = compare(a, b, CompareOptions(threshold=0))
    assert report.first is not None
    assert report.status == "diverged" and (report.first.layer, report.first.tier) == (6, "fail")


def test_legacy_checkpoint_jsonl_grades_the_leading_values_both_sides_carry_as_its_spec_says(tmp_path):
    def write(path, offset):
        docs = [
            {
                "checkpoint": "layer_0_output",
                "team": "t",
                "token_idx": tok,
                "dtype": "f32",
                "shape": "[896]",
                "values": [0.1 * i + (offset if tok == 1 else 0) for i in range(10)],
            }
            for tok in range(3)
        ]
        return write_json_lines(path, docs)

    close = compare(write(tmp_path / "a.jsonl", 0), write(tmp_path / "b.jsonl", 1e-4))
    assert close.status == "ok" and close.findings.bases.tolist() == [0, 0, 0, 0, 3]
    far = compare(write(tmp_path / "c.jsonl", 0), write(tmp_path / "d.jsonl", 0.5))
    assert far.first is not None
    assert far.status == "diverged" and far.first.token_idx == 1 and far.first.basis == "leading"
    assert (
        "the leading values both sides carry (the rule of formats that hold only those: legacy checkpoint JSONL, llama.cpp's printout)"
        in render_text(far)
    )


def test_exact_fails_any_hash_difference_that_tolerances_would_pass(tmp_path):
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    y = np.nextafter(x, np.float32(2))  # one ulp up: far inside any tolerance
    a = write_jsonl(tmp_path / "a.jsonl", [record("h", x, token_idx=0, values=ALL_VALUES)])
    b = write_jsonl(tmp_path / "b.jsonl", [record("h", y, token_idx=0, values=ALL_VALUES)])
    assert compare(a, b).status == "ok"
    strict = compare(a, b, CompareOptions(exact=True))
    assert strict.first is not None
    assert strict.status == "diverged" and "--exact" in strict.first.reason
    assert compare(a, a, CompareOptions(exact=True)).status == "ok"


def test_the_rules_follow_every_file_of_a_side():
    assert semantics("legacy-trace", "orchlog-jsonl").hash_decides
    assert not semantics("legacy-trace+orchlog-jsonl", "orchlog-jsonl").hash_decides  # mixed: orchlog's rules
    assert semantics("legacy-checkpoint-jsonl", "orchlog-jsonl").leading_rule
    assert semantics("orchlog-jsonl", "parquet", exact=True).hash_decides
