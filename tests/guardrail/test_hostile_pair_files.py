"""One pair's hostile files are that pair's MALFORMED_FILE; the rest of the matrix is checked as usual."""

from __future__ import annotations

import gzip
import json

from orchlog.guardrail import PAIRING_ERROR, PASS_EQUIV, guardrail
from tests.guardrail.trees import write_matrix


def _side(root, kv: int, seed: int, mode: str):
    return root / "runs" / f"kv_aligned_{kv}" / f"seed_{seed}" / mode


def test_a_deeply_nested_metadata_json_and_a_token_idx_of_1e400_fail_only_their_pairs(tree):
    root = write_matrix(tree).root
    (_side(root, 1, 0, "prefill") / "metadata.json").write_text('{"a":' * 5000 + "1" + "}" * 5000)
    logits = _side(root, 1, 1, "decode") / "logits.jsonl.gz"
    lines = gzip.decompress(logits.read_bytes()).decode().splitlines()
    doc = json.loads(lines[1])
    lines[1] = (
        lines[1]
        .replace(f'"token_idx": {doc["token_idx"]}', '"token_idx": 1e400', 1)
        .replace(f'"token_idx":{doc["token_idx"]}', '"token_idx":1e400', 1)
    )
    assert "1e400" in lines[1]
    logits.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    result = guardrail(root)
    verdicts = {p.label: p for p in result.pairs}
    deep, big = verdicts["kv_aligned=1 seed=0"], verdicts["kv_aligned=1 seed=1"]
    assert deep.verdict == big.verdict == PAIRING_ERROR
    assert any(e.kind == "MALFORMED_FILE" and "nested deeper" in e.message for e in deep.pairing_errors)
    assert any(e.kind == "MALFORMED_FILE" and "token_idx" in e.message for e in big.pairing_errors)
    assert verdicts["kv_aligned=1 seed=2"].verdict == PASS_EQUIV
    json.dumps(result.to_json())  # summary.json can be written
