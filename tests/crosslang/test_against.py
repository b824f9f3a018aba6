"""Every emitter compares each record with ORCH_LOG_AGAINST's reference alike, and writes the same bytes.

The reference (written by the reference encoder, as JSONL summaries or a binary stream with the
tensors) holds tests/crosslang/tensors.json with some tensors changed: scaled by half again or more (not
within 1e-3 on any evidence), one nudged by a millionth of its norm (within on any evidence), the
others equal. What each emitter must write follows from docs/knobs.md, modelled here: the first record
not proven within at its token or an earlier one is written whole ("against"), then the
ORCH_LOG_AGAINST_CONTEXT records after it ("against_context"); the first record holding NaN or Inf is
said on stderr and, with ORCH_LOG_ON_NONFINITE=full or stop, written whole ("nonfinite"); ORCH_LOG_STOP
and ORCH_LOG_ON_NONFINITE=stop end the records. A record written whole keeps every value in JSONL.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from orchlog import schema_gen
from tests.crosslang import producers
from tests.crosslang.reference import TENSORS, expected_files, key_part
from tests.crosslang.test_byte_identical import first_difference

DOC = json.loads(TENSORS.read_text(encoding="utf-8"))
SCALED = {"attn_norm": 1.5, "注意力": 1.5, "logits": 2.0, "ffn_gate": 1.5, "token_ids": 2}
NUDGED = "ffn_out"
TOKEN = next(f for f in schema_gen.RECORD_FIELDS if f.name == "token_idx")


def _values(t: dict) -> np.ndarray:
    raw = bytes.fromhex(t["data_hex"])
    if t["dtype"] == "bf16":
        return (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
    return np.frombuffer(raw, schema_gen.DTYPE_NUMPY[t["dtype"]])


def reference_doc() -> dict:
    ref = copy.deepcopy(DOC)
    for t in ref["tensors"]:
        x = _values(t)
        if t["checkpoint"] in SCALED:
            t["data_hex"] = (x * np.asarray(SCALED[t["checkpoint"]], dtype=x.dtype)).astype(x.dtype).tobytes().hex()
        elif t["checkpoint"] == NUDGED:
            y = x.copy()
            y[0] += np.float32(1e-6 * np.linalg.norm(x.astype(np.float64)))
            t["data_hex"] = y.tobytes().hex()
    assert ref["tensors"] != DOC["tensors"]
    return ref


def expected_doc(context: int, on_nonfinite: str, stop: bool) -> dict:
    """DOC as a run against reference_doc() writes it: the rules of docs/knobs.md, one record at a time."""
    out = copy.deepcopy(DOC)
    first_failed, tokenless_failed, left, stop_after, nonfinite_seen = None, False, 0, False, False
    kept = []
    for t in out["tensors"]:
        token = key_part(TOKEN, t.get("token_idx"))
        x = _values(t)
        nonfinite = x.dtype.kind == "f" and not np.isfinite(x).all()
        why = None
        if t["checkpoint"] in SCALED:  # not within: the first at its token or an earlier one is written whole
            earliest = (first_failed is None or token < first_failed) if token is not None else not tokenless_failed
            if earliest:
                if token is None:
                    tokenless_failed = True
                else:
                    first_failed = token
                why, left, stop_after = "against", context, stop_after or stop
        if why is None and left > 0:
            why, left = "against_context", left - 1
        first_nonfinite = nonfinite and not nonfinite_seen and on_nonfinite != "off"
        nonfinite_seen |= first_nonfinite
        if first_nonfinite and on_nonfinite in ("full", "stop"):
            why = "nonfinite"
        t["full_reason"] = why
        kept.append(t)
        if (first_nonfinite and on_nonfinite == "stop") or (stop_after and left == 0):
            break
    out["tensors"] = kept
    return out


CASES = {
    "summary_reference_context_2_nonfinite_full": (
        "summary",
        "summary",
        {"ORCH_LOG_AGAINST_CONTEXT": "2", "ORCH_LOG_ON_NONFINITE": "full"},
    ),
    "whole_reference_stop_at_first_fail": (
        "full",
        "full",
        {"ORCH_LOG_AGAINST_CONTEXT": "3", "ORCH_LOG_STOP": "first_fail"},
    ),
    "whole_reference_both_modes_no_context_stop_at_nonfinite": (
        "full",
        "both",
        {"ORCH_LOG_AGAINST_CONTEXT": "0", "ORCH_LOG_ON_NONFINITE": "stop"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("producer", producers.PRODUCERS, ids=str)
def test_each_emitter_writes_whole_what_the_reference_does_not_prove(producer, case, tmp_path):
    ref_mode, mode, settings = CASES[case]
    knobs = {"ORCH_LOG_TEAM": "crosslang", "SOURCE_DATE_EPOCH": "1767323045"}
    ref_path = tmp_path / "ref.trace"
    ref_files = expected_files(
        reference_doc(), {**knobs, "ORCH_LOG_FILE": str(ref_path), "ORCH_LOG_MODE": ref_mode}, "python"
    )
    ref_path.write_bytes(ref_files["ref.trace"])
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    knobs |= {
        "ORCH_LOG_FILE": str(out_dir / "trace.out"),
        "ORCH_LOG_MODE": mode,
        "ORCH_LOG_AGAINST": str(ref_path),
        **settings,
    }
    want_doc = expected_doc(
        int(settings["ORCH_LOG_AGAINST_CONTEXT"]),
        settings.get("ORCH_LOG_ON_NONFINITE", "off"),
        settings.get("ORCH_LOG_STOP") == "first_fail",
    )
    reasons = [t["full_reason"] for t in want_doc["tensors"]]
    assert "against" in reasons and None in reasons  # the case is not vacuous

    done = producers.launch(producer, TENSORS, knobs, out_dir)

    expected = expected_files(want_doc, knobs, producer.language)
    assert sorted(done.files) == sorted(expected)
    for name, want in expected.items():
        assert done.files[name] == want, f"{producer} {name}: {first_difference(done.files[name], want)}"
    nonfinite = [w for w in done.warnings if "NaN or Inf" in w]
    assert len(nonfinite) == (0 if "ORCH_LOG_ON_NONFINITE" not in settings else 1), done.stderr
    if nonfinite:
        assert nonfinite[0].startswith(
            "orchlog: warning: the first tensor holding NaN or Inf: 'Qcur' token_idx=5 layer=1"
        )
    assert done.returncode == 0, done.stderr
