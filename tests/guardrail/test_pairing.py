"""Pairing checks: both sides cover the same positions with the same token ids and vocabulary, and their
metadata agrees with the run directory and config.json; each mismatch says which pair and what differs."""

from __future__ import annotations

import gzip
import json

from examples.guardrail.artifacts import Pair
from orchlog.guardrail import PAIRING_ERROR, PASS_EQUIV, guardrail

DECODE = "runs/kv_aligned_1/seed_0/decode"


def _pair(tree, **faults):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, **faults))
    (pair,) = guardrail(tree.root).pairs
    return pair


def _kinds(pair):
    return [e.kind for e in pair.pairing_errors]


def _rewrite_decode(tree, change):
    path = tree.root / DECODE / "logits.jsonl.gz"
    rows = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in change(rows)).encode()))


def test_sides_covering_different_spans_are_a_span_mismatch_naming_spans_and_positions(tree):
    pair = _pair(tree, span_shift=2)
    assert pair.verdict == PAIRING_ERROR and set(_kinds(pair)) == {"SPAN_MISMATCH"}
    text = [str(e) for e in pair.pairing_errors]
    start = tree.prompt_len
    assert f"token_span differs: prefill (start {start}, count 4), decode (start {start + 2}, count 4)" in text[0]
    assert f"positions only in prefill: {start}, {start + 1}" in text[1]
    assert f"positions only in decode: {start + 4}, {start + 5}" in text[2]
    assert pair.pairing_errors[1].positions == (start, start + 1)
    assert len(pair.tokens) == 2  # the shared positions are still measured


def test_a_side_whose_lines_disagree_with_its_own_token_span_is_a_span_mismatch(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}))
    _rewrite_decode(tree, lambda rows: rows[:3])
    (pair,) = guardrail(tree.root).pairs
    messages = [e.message for e in pair.pairing_errors]
    assert "decode: metadata token_span declares 4 positions, its logits hold 3" in messages
    assert f"positions only in prefill: {tree.prompt_len + 3}" in messages


def test_without_token_span_the_lines_decide_the_span(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}))
    for side in ("prefill", "decode"):
        meta_path = tree.root / f"runs/kv_aligned_1/seed_0/{side}/metadata.json"
        meta = json.loads(meta_path.read_text())
        del meta["token_span"]
        meta_path.write_text(json.dumps(meta))
    _rewrite_decode(tree, lambda rows: rows[1:])
    (pair,) = guardrail(tree.root).pairs
    assert [str(e) for e in pair.pairing_errors] == [f"SPAN_MISMATCH: positions only in prefill: {tree.prompt_len}"]


def test_different_token_ids_at_a_position_are_a_token_mismatch_naming_position_and_ids(tree):
    pair = _pair(tree, token_id_changed_at=1)
    (err,) = pair.pairing_errors
    pos = tree.prompt_len + 1
    prefill_id = pair.tokens[1].token_id
    assert err.kind == "TOKEN_MISMATCH" and err.positions == (pos,)
    assert err.message == (
        f"token ids differ at 1 positions: position {pos}: prefill {prefill_id}, decode {(prefill_id + 1) % tree.vocab}"
    )


def test_logits_of_different_lengths_are_a_shape_mismatch(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}))
    _rewrite_decode(tree, lambda rows: [{**r, "logits": r["logits"] + [0.0]} for r in rows])
    (pair,) = guardrail(tree.root).pairs
    assert _kinds(pair) == ["SHAPE_MISMATCH"]
    assert pair.pairing_errors[0].message.endswith(f"first at position {tree.prompt_len}: prefill 64, decode 65")


def test_rows_in_a_different_order_still_pair_by_position(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}))
    _rewrite_decode(tree, lambda rows: rows[::-1])
    (pair,) = guardrail(tree.root).pairs
    assert pair.verdict == PASS_EQUIV and [t.token_idx for t in pair.tokens] == list(range(16, 20))


def test_a_position_written_twice_is_reported_with_both_lines(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}))
    _rewrite_decode(tree, lambda rows: rows + rows[:1])
    (pair,) = guardrail(tree.root).pairs
    (err,) = pair.pairing_errors
    assert err.kind == "MALFORMED_FILE" and "logits.jsonl.gz:5: token_idx 16 again (first at" in err.message
    assert err.message.endswith("logits.jsonl.gz:1); skipped")


def test_metadata_contradicting_the_run_directory_is_a_metadata_mismatch(tree):
    pair = _pair(tree, metadata={"kv_aligned": 0, "mode": "prefill"})
    assert _kinds(pair) == ["METADATA_MISMATCH", "METADATA_MISMATCH"]
    assert "decode: " in pair.pairing_errors[0].message
    assert "says kv_aligned 0 but the run directory says '1'" in pair.pairing_errors[0].message
    assert "says mode 'prefill' but the run directory says 'decode'" in pair.pairing_errors[1].message


def test_metadata_contradicting_config_json_is_a_metadata_mismatch(tree):
    tree.write_config(kv_aligned=[1], seeds=[0])
    pair = _pair(tree, metadata={"dtype": "f32"})
    (err,) = pair.pairing_errors
    assert err.kind == "METADATA_MISMATCH" and "expects dtype 'bf16'" in err.message and "says 'f32'" in err.message
