"""What a side may hold: logits.jsonl plain or gzipped, or an orchlog trace in its place; and how missing or
malformed files are reported (file and line), never raised."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from examples.guardrail.artifacts import Pair
from orchlog.encoding.record import ALL_VALUES, HeaderInput, RecordInput, encode_header, encode_record
from orchlog.guardrail import INCOMPLETE, PAIRING_ERROR, PASS_EQUIV, guardrail

RUN = "runs/kv_aligned_1/seed_0"
FORMATS = {
    "jsonl": "legacy-logits",
    "jsonl.gz": "legacy-logits",
    "orchlog-jsonl": "orchlog-jsonl",
    "orchlog-bin": "orchlog-binary",
    "orchlog-parquet": "orchlog-parquet",
}


def _pair(tree, **pair):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, **pair))
    (result,) = guardrail(tree.root).pairs
    return result


@pytest.mark.parametrize(
    "encodings",
    [
        ("jsonl", "jsonl.gz"),
        ("jsonl.gz", "orchlog-jsonl"),
        ("orchlog-bin", "jsonl"),
        ("orchlog-jsonl", "orchlog-bin"),
        ("orchlog-parquet", "jsonl.gz"),
    ],
)
def test_every_encoding_reads_the_same_logits(tree, encodings):
    pair = _pair(tree, encodings=encodings)
    assert pair.verdict == PASS_EQUIV and len(pair.tokens) == tree.gen_len and pair.aggregates["max_abs_diff"] == 0
    assert pair.tokens[0].token_id is not None  # orchlog traces carry it in their token_id field
    assert [s.format for s in pair.sides] == [FORMATS[e] for e in encodings]


def test_an_orchlog_trace_needs_no_metadata_json_but_legacy_logits_do(tree):
    for encodings, expected in ((("orchlog-bin", "orchlog-bin"), []), (("jsonl", "jsonl"), ["MISSING_FILE"])):
        tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, encodings=encodings, missing="metadata"))
        (pair,) = guardrail(tree.root).pairs
        assert [e.kind for e in pair.pairing_errors] == expected
        for side in ("prefill", "decode"):
            for f in (tree.root / RUN / side).iterdir():
                f.unlink()
    assert pair.pairing_errors[0].message == f"decode: {tree.root / RUN / 'decode/metadata.json'} is missing"


@pytest.mark.parametrize(
    "missing, message",
    [
        ("logits", "decode: {run}/decode/logits.jsonl (or .gz, or an orchlog trace) is missing"),
        ("side", "decode: {run}/decode/ is missing"),
    ],
)
def test_a_side_that_never_ran_leaves_its_pair_incomplete(tree, missing, message):
    pair = _pair(tree, missing=missing)
    assert pair.verdict == INCOMPLETE and not pair.failed
    assert [str(e) for e in pair.pairing_errors] == ["MISSING_RUN: " + message.format(run=tree.root / RUN)]


def test_a_malformed_line_is_reported_with_its_file_and_line_and_the_rest_is_read(tree):
    pair = _pair(tree, malformed_at=2)
    first = pair.pairing_errors[0]
    assert first.kind == "MALFORMED_FILE"
    assert first.message.startswith(f"decode: {tree.root / RUN}/decode/logits.jsonl.gz:3: malformed JSON")
    assert [t.token_idx for t in pair.tokens] == [16, 17, 19]


def test_malformed_metadata_json_is_reported_with_its_line(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}))
    (tree.root / RUN / "prefill/metadata.json").write_text('{\n "dtype": "bf16",\n "seed": }\n')
    (pair,) = guardrail(tree.root).pairs
    assert [e.message for e in pair.pairing_errors] == [
        f"prefill: {tree.root / RUN}/prefill/metadata.json:3: malformed JSON (Expecting value at column 10)"
    ]


def test_a_bad_token_span_is_reported(tree):
    pair = _pair(tree, metadata={"token_span": {"start": 16}})
    assert pair.pairing_errors[0].kind == "MALFORMED_FILE" and "token_span must be" in pair.pairing_errors[0].message


def test_a_gzip_file_cut_short_keeps_its_whole_rows_and_says_where_it_broke(tree):
    tree.vocab = 8192  # rows long enough that the cut falls after the first ones
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}))
    path = tree.root / RUN / "decode/logits.jsonl.gz"
    path.write_bytes(path.read_bytes()[:-200])
    (pair,) = guardrail(tree.root).pairs
    assert pair.verdict == PAIRING_ERROR and [t.token_idx for t in pair.tokens] == [16, 17, 18]
    broken = pair.pairing_errors[0]
    assert broken.kind == "MALFORMED_FILE" and broken.message.startswith(f"decode: {path}@")
    assert broken.message.endswith(
        ": compressed stream cut short (Compressed file ended before the end-of-stream "
        "marker was reached); the lines before it were read"
    )


def test_an_empty_logits_file_is_malformed_not_a_crash(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, encodings=("jsonl", "jsonl")))
    (tree.root / RUN / "decode/logits.jsonl").write_bytes(b"")
    (pair,) = guardrail(tree.root).pairs
    assert [str(e) for e in pair.pairing_errors] == [
        f"MALFORMED_FILE: decode: {tree.root / RUN}/decode/logits.jsonl is empty: nothing to read"
    ]


def test_both_logits_files_or_several_traces_are_ambiguous(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, encodings=("jsonl", "jsonl")))
    decode = tree.root / RUN / "decode"
    (decode / "logits.jsonl.gz").write_bytes(gzip.compress((decode / "logits.jsonl").read_bytes()))
    (pair,) = guardrail(tree.root).pairs
    assert "holds both logits.jsonl and logits.jsonl.gz" in pair.pairing_errors[0].message


def test_an_orchlog_trace_holding_only_leading_values_is_reported_with_what_to_do(tree):
    tree.write_pair(Pair({"kv_aligned": 1, "seed": 0}, encodings=("jsonl", "jsonl")))
    decode = tree.root / RUN / "decode"
    (decode / "logits.jsonl").unlink()
    head, _ = encode_header(HeaderInput(language="python", created="2026-01-01T00:00:00Z"))
    rec = RecordInput(
        checkpoint="logits", dtype="f32", shape=(64,), data=np.zeros(64, "<f4").tobytes(), token_idx=16, values=10
    )
    (decode / "trace.jsonl").write_bytes(head + encode_record(rec).jsonl)
    (pair,) = guardrail(tree.root).pairs
    assert "holds 10 of 64 logits (log every value: ORCH_LOG_VALUES=all" in pair.pairing_errors[0].message
    assert ALL_VALUES == -1
