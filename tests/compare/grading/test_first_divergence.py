"""The first diverging token, then the earliest failing record at it, in any pair of formats."""

from __future__ import annotations

import json

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from tests.compare.runs import from_layer, run
from tests.tracegen import name_of, record, write_frames, write_json_lines, write_jsonl

WRITERS = {"jsonl": write_jsonl, "bin": write_frames}


@pytest.mark.parametrize("fmt_a, fmt_b", [("jsonl", "jsonl"), ("bin", "bin"), ("jsonl", "bin"), ("bin", "jsonl")])
def test_the_injected_bug_is_named_by_token_layer_and_checkpoint(tmp_path, fmt_a, fmt_b):
    a = WRITERS[fmt_a](tmp_path / f"a.{fmt_a}", run())
    b = WRITERS[fmt_b](tmp_path / f"b.{fmt_b}", run(bug=from_layer(token=1, layer=2, checkpoint="Qcur")))
    report = compare(a, b)
    assert not report and report.status == "diverged"
    assert report.diverging_token == 1 and report.decided_by == "logits"
    assert report.first is not None
    assert (report.first.checkpoint, report.first.layer, report.first.token_idx) == ("Qcur", 2, 1)
    assert report.first.tier == "fail"


def test_identical_traces_are_ok(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", run())
    b = write_frames(tmp_path / "b.bin", run())
    report = compare(a, b)
    assert report and report.status == "ok" and report.first is None
    assert report.findings.counts[0] == report.findings.pairs == len(run())


def test_execution_order_comes_from_seq_not_from_file_order(tmp_path):
    recs = run(tokens=1, bug=from_layer(0, 1, "attn_norm"))
    a = write_jsonl(tmp_path / "a.jsonl", run(tokens=1))
    b = write_jsonl(tmp_path / "b.jsonl", list(reversed(recs)))  # written backwards, seq still says the truth
    report = compare(a, b)
    assert report.first is not None
    assert (report.first.checkpoint, report.first.layer) == ("attn_norm", 1)


def test_without_logits_the_last_checkpoint_of_a_token_decides(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [r for r in run() if r.checkpoint != "logits"])
    b = write_jsonl(tmp_path / "b.jsonl", [r for r in run(bug=from_layer(2, 0, "ffn_out")) if r.checkpoint != "logits"])
    report = compare(a, b)
    assert report.diverging_token == 2 and report.decided_by == "last_checkpoint"
    assert report.first is not None
    assert (report.first.checkpoint, report.first.layer) == ("ffn_out", 0)


def test_an_early_small_failure_does_not_hide_the_token_whose_logits_fail(tmp_path):
    def bug(t, layer, name):
        if t == 0 and layer == 0 and name == "l_out":
            return 0.05  # fails the intermediate threshold, but the logits of token 0 are fine
        return from_layer(2, 1, "Qcur")(t, layer, name)

    report = compare(write_jsonl(tmp_path / "a.jsonl", run()), write_jsonl(tmp_path / "b.jsonl", run(bug=bug)))
    assert report.first is not None
    assert report.diverging_token == 2 and report.first.layer == 1 and report.first.checkpoint == "Qcur"


def test_growth_by_layer_shows_where_the_error_starts_at_the_diverging_token(tmp_path):
    report = compare(
        write_frames(tmp_path / "a.bin", run()), write_frames(tmp_path / "b.bin", run(bug=from_layer(0, 1, "ffn_out")))
    )
    labels = [(g.label, g.failed > 0) for g in report.growth]
    assert labels == [("embedding", False), ("layer 0", False), ("layer 1", True), ("layer 2", True), ("logits", True)]


def test_legacy_checkpoint_jsonl_from_two_teams_finds_the_divergence(tmp_path):
    def lines(bug):
        return [
            {
                "checkpoint": r.checkpoint if r.layer is None else f"layer_{r.layer}_{name_of(r)}",
                "team": "t",
                "token_idx": r.token_idx,
                "dtype": "f32",
                "shape": f"[{len(r.data) // 4}]",
                "values": np.frombuffer(r.data, "<f4").tolist(),
            }
            for r in run(bug=bug)
        ]

    a = write_json_lines(tmp_path / "llama.jsonl", lines(None))
    b = write_json_lines(tmp_path / "ours.jsonl", lines(from_layer(1, 1, "l_out")))
    report = compare(a, b)
    assert report.first is not None
    assert (report.diverging_token, report.first.checkpoint) == (1, "layer_1_l_out")


def test_legacy_trace_directories_align_on_seq_layer_stage_and_hashes(tmp_path):
    def write(root, rms_of_layer2):
        root.mkdir()
        for layer, rms in enumerate([0.5, 0.7, rms_of_layer2]):
            doc = {
                "name": f"blk{layer}",
                "shape": [8],
                "dtype": "f32",
                "blake3": f"{layer}{rms}".ljust(64, "0"),
                "rms": rms,
                "num_elements": 8,
                "seq": 0,
                "layer": layer,
                "stage": "attn_out",
            }
            (root / f"{layer}.trace").write_text(json.dumps(doc, indent=2))
        return root

    report = compare(write(tmp_path / "rust", 0.9), write(tmp_path / "cpp", 0.95))
    assert report.key == ("token_idx", "layer", "stage")
    # Every pair is decided by its hashes: two equal, and one that differs, which the format calls a divergence.
    assert report.findings.bases.tolist() == [0, 3, 0, 0, 0]
    assert report.first is not None
    assert report.first.layer == 2 and report.first.failed and "blake3 differs" in report.first.reason
    assert report.first.metrics["max_abs"] == pytest.approx(0.05)  # at least the rms gap


def test_names_that_differ_between_engines_meet_through_a_map(tmp_path):
    a = write_jsonl(
        tmp_path / "a.jsonl",
        [record(f"blk.{i}.attn_norm", np.full(4, i, np.float32), token_idx=0, seq=i) for i in range(3)],
    )
    b = write_jsonl(
        tmp_path / "b.jsonl",
        [
            record(f"model.layers.{i}.input_layernorm", np.full(4, i + (i == 2), np.float32), token_idx=0, seq=i)
            for i in range(3)
        ],
    )
    assert compare(a, b).status == "no_match"
    report = compare(a, b, CompareOptions(maps=["example"]))
    assert report.first is not None
    assert report.findings.pairs == 3 and (report.first.checkpoint, report.first.layer) == ("attn_norm", 2)
    assert report.first.names == ("blk.2.attn_norm", "model.layers.2.input_layernorm")
