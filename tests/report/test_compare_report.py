"""The report: stable JSON keys, a text layout people can read, Markdown, unmatched and malformed input."""

from __future__ import annotations

import json

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.report import render_markdown, render_text
from tests.compare.runs import from_layer, run
from tests.tracegen import record, write_jsonl

TOP_KEYS = {
    "report",
    "status",
    "inputs",
    "key",
    "maps",
    "tolerances",
    "counts",
    "first_divergence",
    "worst",
    "pairs",
    "pairs_omitted",
    "unmatched",
    "malformed",
    "tracked_token",
    "dumped",
    "token_ids",
    "windows",
    "maps_by_side",
    "diagnosis",
    "diagnoses",
    "coverage",
    "warnings",
    "first_failure",
    "noise",
    "notes",
    "run_differences",
}
PAIR_KEYS = {
    "checkpoint",
    "layer",
    "stage",
    "token_idx",
    "step",
    "rank",
    "order",
    "tier",
    "metric",
    "value",
    "rule",
    "reason",
    "basis",
    "hash",
    "metrics",
    "names",
    "dtypes",
    "shapes",
    "locations",
    "values",
    "mismatches",
    "alignment",
    "shard_ranks",
    "interval",
    "bounds",
    "blake3",
    "numel",
    "noise",
}


def _diverged(tmp_path, **opts):
    a = write_jsonl(tmp_path / "a.jsonl", run())
    extra = record("extra", np.ones(2, np.float32))
    b = write_jsonl(tmp_path / "b.jsonl", run(bug=from_layer(1, 0, "ffn_out"))[3:] + [extra])
    with open(b, "ab") as f:
        f.write(b"{not json\n")
    return compare(a, b, CompareOptions(**opts))


def test_json_keys_are_the_documented_ones(tmp_path):
    doc = json.loads(json.dumps(_diverged(tmp_path).to_json(), allow_nan=False))
    assert set(doc) == TOP_KEYS and doc["report"] == "orchlog-compare/2" and doc["status"] == "diverged"
    first = doc["first_divergence"]
    assert set(first) == PAIR_KEYS | {"decided_by", "growth", "rerun"}
    assert (first["token_idx"], first["checkpoint"], first["layer"], first["stage"]) == (1, "ffn_out", 0, None)
    one_pass = {"max_abs", "mean_abs", "max_rel", "p99_abs", "rms_a", "rms_b", "rms_diff", "cosine", "l2"}
    assert one_pass <= set(first["metrics"])
    counts = {"pairs", "tiers", "basis", "mismatched", "unmatched_a", "unmatched_b", "malformed", "undecided"}
    assert set(doc["counts"]) == counts
    assert set(doc["counts"]["tiers"]) == {"exact", "close", "acceptable", "warning", "fail", "undecided"}
    assert set(doc["counts"]["basis"]) == {"tensor", "hash", "sketch", "bounds", "leading"}
    coverage = doc["coverage"]
    assert (coverage["pairs"], coverage["only_in_reference"], coverage["only_in_ours"]) == (
        doc["counts"]["pairs"],
        3,
        1,
    )
    assert coverage["malformed"] == 1 and not coverage["complete"] and not coverage["require_all"]
    assert coverage["first_missing"]["name"] == "embedding"
    assert [w.split(";")[0] for w in doc["warnings"]] == [
        "3 reference records have no partner in ours",
        "1 malformed lines or records (0 in reference, 1 in ours)",
    ]
    assert all(set(p) == PAIR_KEYS for p in doc["pairs"] + doc["worst"])


def test_unmatched_records_and_malformed_lines_are_listed_with_where_they_are(tmp_path):
    report = _diverged(tmp_path)
    doc = report.to_json()
    assert doc["counts"]["unmatched_a"] == 3 and doc["counts"]["unmatched_b"] == 1
    assert [u["checkpoint"] for u in doc["unmatched"]["a"]] == ["embedding", "attn_norm", "Qcur"]
    (extra,) = doc["unmatched"]["b"]
    assert extra["name"] == "extra" and extra["location"].endswith(f":{len(run()) - 3 + 2}")
    (bad,) = doc["malformed"]
    assert bad["input"] == "b" and bad["line"] == len(run()) - 3 + 3 and "malformed JSON" in bad["message"]
    text = render_text(report)
    for section in (
        "RESULTS:",
        "FIRST DIVERGENCE: token 1",
        "error by layer at token 1",
        "WORST OFFENDERS:",
        "UNMATCHED (only in a): 3",
        "UNMATCHED (only in b): 1",
        "MALFORMED INPUT: 1",
        "RESULT: diverged",
    ):
        assert section in text, section


def test_pairs_are_capped_unless_detail_is_asked_for(tmp_path):
    capped = _diverged(tmp_path, max_pairs=2)
    assert len(capped.to_json()["pairs"]) == 2 and capped.to_json()["pairs_omitted"] == capped.findings.failed - 2
    detail = _diverged(tmp_path, detail=True)
    assert len(detail.to_json()["pairs"]) == detail.findings.pairs and "DETAIL:" in render_text(detail)


def test_no_pairs_kept_changes_nothing_else_of_the_report(tmp_path):
    """What the text report does without a pair list (the CLI keeps none for text and Markdown)."""
    kept, none = _diverged(tmp_path), _diverged(tmp_path, max_pairs=0)
    assert none.findings.kept_pairs() == [] and none.to_json()["pairs_omitted"] == none.findings.failed > 0
    assert render_text(none) == render_text(kept) and render_markdown(none) == render_markdown(kept)


def test_markdown_has_the_tiers_table_and_the_first_divergence(tmp_path):
    md = render_markdown(_diverged(tmp_path))
    assert md.startswith("# orchlog compare") and "| fail |" in md and "## First divergence: token 1" in md


def test_the_tracked_token_rank_is_reported_per_logits_position(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", run(values=-1))
    b = write_jsonl(tmp_path / "b.jsonl", run(values=-1, bug=from_layer(1, 0, "Qcur")))
    report = compare(a, b, CompareOptions(track_token=3))
    ranks = report.to_json()["tracked_token"]["positions"]
    assert [r["token_idx"] for r in ranks] == [0, 1, 2]
    assert ranks[0]["rank_a"] == ranks[0]["rank_b"]
    assert "TRACKED TOKEN 3" in render_text(report)


def test_pairs_whose_hashes_differ_with_nothing_else_say_so_with_each_sides_rms(tmp_path):
    import json as _json

    def write(path, blake3):
        doc = {
            "name": "attn_out",
            "shape": [4],
            "dtype": "f32",
            "blake3": blake3,
            "rms": 0.5,
            "num_elements": 4,
            "seq": 0,
            "layer": 1,
            "stage": "attn_out",
        }
        path.write_text(_json.dumps(doc) + "\n")
        return path

    report = compare(write(tmp_path / "a.jsonl", "a" * 64), write(tmp_path / "b.jsonl", "b" * 64))
    # The legacy trace format's own rule: a differing hash is a divergence, even with the same rms.
    assert report.first is not None
    assert not report and report.first.failed and report.first.basis == "hash"
    text = render_text(report)
    assert "fail: blake3 differs (legacy trace records: any hash difference is a divergence)" in text
    assert f"blake3 a {'a' * 64}  b {'b' * 64}; rms 0.5 vs 0.5; num_elements 4 vs 4" in text
