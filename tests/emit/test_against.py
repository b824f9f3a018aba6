"""ORCH_LOG_AGAINST through the Python emitter (the C++ core): each record is compared with the reference's
record of its key as it is written; the first not proven within tolerance at its token or an earlier one is
written whole, with its context, and says why."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import orchlog
from orchlog.read.paths import open_trace

RUN: dict[str, Any] = {"team": "t", "select": "", "model": "", "git_commit": ""}
TOKENS, LAYERS = 4, 3


def _tensors(seed: int = 5) -> dict[tuple[int, int], np.ndarray]:
    rng = np.random.default_rng(seed)
    return {(t, layer): rng.standard_normal(300).astype(np.float32) for t in range(TOKENS) for layer in range(LAYERS)}


def _write(path, tensors, mode="summary", **settings) -> list[str | None]:
    """Logs the tensors token by token as an engine would (tokens outer, layers inner); the full_reason of each
    record written."""
    assert orchlog.configure(path=str(path), mode=mode, **RUN, **settings)
    for (token, layer), x in tensors.items():
        orchlog.log("l_out", x, token, layer)
    orchlog.close()
    return [r.full_reason for r in open_trace(path)]


@pytest.fixture(params=["summary", "full"])
def reference(request, tmp_path):
    path = tmp_path / ("ref.jsonl" if request.param == "summary" else "ref.bin")
    _write(path, _tensors(), request.param, against="")
    return path


def test_a_run_that_agrees_writes_only_summaries(tmp_path, reference):
    reasons = _write(tmp_path / "ours.jsonl", _tensors(), against=str(reference))
    assert reasons == [None] * TOKENS * LAYERS


def test_differences_well_within_tolerance_are_proven_by_the_sketch_or_the_tensors(tmp_path, reference):
    ours = {k: x * np.float32(1 + 2e-5) for k, x in _tensors().items()}  # rel_l2 2e-5, tolerance 1e-3
    assert _write(tmp_path / "ours.jsonl", ours, against=str(reference)) == [None] * TOKENS * LAYERS


def test_the_first_failure_and_its_context_are_whole_and_later_tokens_failing_too_are_not(tmp_path, reference):
    ours = _tensors()
    for token in range(1, TOKENS):  # a bug from layer 1 of token 1 on
        for layer in range(1, LAYERS):
            ours[token, layer] = ours[token, layer] * np.float32(1.5)
    out = tmp_path / "ours.jsonl"
    reasons = _write(out, ours, against=str(reference), against_context=2)
    first = 1 * LAYERS + 1  # token 1, layer 1
    assert reasons == [None] * first + ["against", "against_context", "against_context"] + [None] * (
        TOKENS * LAYERS - first - 3
    )
    whole = [r for r in open_trace(out) if r.full_reason]
    lengths = [None if r.values is None else len(r.values) for r in whole]
    assert lengths == [300] * 3  # every value inline: the tensor itself
    np.testing.assert_array_equal(np.asarray(whole[0].values, np.float32), ours[1, 1])


def test_an_earlier_token_failing_later_is_written_whole_too(tmp_path, reference):
    ours = _tensors()
    ours[2, 0] = ours[2, 0] * np.float32(2)  # token 2 fails first...
    ours[1, 2] = ours[1, 2] * np.float32(2)  # ...then token 1 (an engine that logs tokens out of order)
    order = sorted(ours, key=lambda k: (k != (2, 0), k))  # (2, 0) first, the rest in order
    assert orchlog.configure(path=str(tmp_path / "ours.jsonl"), against=str(reference), against_context=0, **RUN)
    for token, layer in order:
        orchlog.log("l_out", ours[token, layer], token, layer)
    orchlog.close()
    whole = {(r.token_idx, r.layer): r.full_reason for r in open_trace(tmp_path / "ours.jsonl") if r.full_reason}
    assert whole == {(2, 0): "against", (1, 2): "against"}


def test_stop_first_fail_ends_the_records_after_the_context_and_says_so(tmp_path, reference, capfd):
    ours = {k: x * np.float32(1.5) if k == (1, 0) else x for k, x in _tensors().items()}
    capfd.readouterr()
    out = tmp_path / "ours.jsonl"
    assert orchlog.configure(path=str(out), against=str(reference), against_context=1, stop="first_fail", **RUN)
    enabled = []
    for (token, layer), x in ours.items():
        orchlog.log("l_out", x, token, layer)
        enabled.append(orchlog.stats().enabled)
    orchlog.close()
    assert [r.full_reason for r in open_trace(out)] == [None] * LAYERS + ["against", "against_context"]
    assert enabled == [True] * (LAYERS + 1) + [False] * (TOKENS * LAYERS - LAYERS - 1)  # off: one load a call
    assert "logging stopped after 5 records" in capfd.readouterr().err


def test_a_record_the_reference_lacks_is_a_summary_and_one_note_not_an_error(tmp_path, reference, capfd):
    errors = orchlog.stats().errors
    capfd.readouterr()
    assert orchlog.configure(path=str(tmp_path / "ours.jsonl"), against=str(reference), **RUN)
    for layer in range(LAYERS):
        orchlog.log("extra", np.ones(4, np.float32), 0, layer)
    orchlog.close()
    err = capfd.readouterr().err.splitlines()
    assert [line for line in err if "holds no record" in line] == [
        "orchlog: warning: ORCH_LOG_AGAINST: the reference holds no record 'extra' token_idx=0 layer=0 rank=0 "
        "num_shards=1 (call 1 under its key); records it lacks are written as summaries (said for the first only)"
    ]
    assert orchlog.stats().errors == errors


@pytest.mark.parametrize(
    "content, said",
    [
        (None, "cannot open the ORCH_LOG_AGAINST reference"),
        (b"", "holds no record"),
        (b"\x00\x01 not a trace", "is unusable from byte 0 on: not a msgpack map"),
        (b'{"orchlog":2}\n{"checkpoint": [1, \n', "has no orchlog record at line 2"),
    ],
)
def test_a_reference_that_cannot_be_read_is_one_warning_and_the_run_logs_as_without_it(tmp_path, content, said, capfd):
    ref = tmp_path / "ref"
    if content is not None:
        ref.write_bytes(content)
    capfd.readouterr()
    reasons = _write(tmp_path / "ours.jsonl", _tensors(), against=str(ref))
    assert reasons == [None] * TOKENS * LAYERS
    err = [line for line in capfd.readouterr().err.splitlines() if "ORCH_LOG_AGAINST" in line]
    assert len(err) == 1 and said in err[0], err


def test_a_hostile_jsonl_reference_is_read_no_further_than_its_damage(tmp_path, capfd):
    ref = tmp_path / "ref.jsonl"
    _write(ref, _tensors(), against="")
    lines = ref.read_bytes().splitlines(keepends=True)
    deep = b'{"checkpoint":"l_out","x":' + b"[" * 100 + b"]" * 100 + b"}\n"
    ref.write_bytes(b"".join(lines[:4]) + deep + b"".join(lines[4:]))  # 3 records, then a line nested 100 deep
    ours = {k: x * np.float32(2) for k, x in _tensors().items()}
    capfd.readouterr()
    reasons = _write(tmp_path / "ours.jsonl", ours, against=str(ref), against_context=0)
    assert "has no orchlog record at line 5" in capfd.readouterr().err
    assert reasons[:3] == ["against", None, None] and set(reasons[3:]) == {None}


def test_a_binary_reference_damaged_after_it_was_indexed_is_compared_by_the_summary_it_was_indexed_with(
    tmp_path, capfd
):
    ref = tmp_path / "ref.bin"
    _write(ref, _tensors(), "full", against="")
    ours = {k: x * np.float32(1 + 2e-5) for k, x in _tensors().items()}  # within; not the same bytes
    keys = list(ours)
    ours[keys[5]] = ours[keys[5]] * np.float32(1.5)  # the damaged record's: not within, on its summary too
    out = tmp_path / "ours.jsonl"
    capfd.readouterr()
    assert orchlog.configure(path=str(out), against=str(ref), against_context=0, **RUN)
    orchlog.log("l_out", ours[keys[0]], *keys[0])  # the reference is indexed: every frame sound
    data = bytearray(ref.read_bytes())
    at = data.index(_tensors()[keys[5]].tobytes())  # a later record's tensor, one bit flipped under the run
    data[at] ^= 0x04
    ref.write_bytes(bytes(data))
    for key in keys[1:]:
        orchlog.log("l_out", ours[key], *key)
    orchlog.close()
    # The sketches prove the others within and the damaged record's beyond: it was compared, by its summary.
    assert [r.full_reason for r in open_trace(out)] == [None] * 5 + ["against"] + [None] * (TOKENS * LAYERS - 6)
    said = [line for line in capfd.readouterr().err.splitlines() if "ORCH_LOG_AGAINST" in line]
    assert len(said) == 1 and said[0].endswith(
        "is refused: it fails its checksum (CRC-32C); it is compared by its summary (said for the first only)"
    ), said
    assert "'l_out' token_idx=1 layer=2" in said[0], said


def test_the_header_and_the_whole_records_read_back_as_json_with_every_value(tmp_path, reference):
    ours = {k: x * np.float32(1.5) for k, x in _tensors().items()}
    out = tmp_path / "ours.jsonl"
    _write(out, ours, against=str(reference), against_context=0)
    first = json.loads(out.read_text().splitlines()[1])
    assert first["full_reason"] == "against" and len(first["values"]) == first["numel"] == 300
