"""Derived checkpoints: a canonical checkpoint computed from other records of the same side at the same
key (a sum, an RMS norm with a weight from a file, a slice), compared like any record."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.encoding.record import RecordInput
from orchlog.errors import OrchlogError
from orchlog.maps.namemap import load_maps
from orchlog.report import render_text
from tests.tracegen import record, write_frames, write_jsonl

RNG = np.random.default_rng(5)
HIDDEN = RNG.standard_normal((3, 8)).astype(np.float32)
RESIDUAL = RNG.standard_normal((3, 8)).astype(np.float32)
WEIGHT = (1 + 0.1 * RNG.standard_normal(8)).astype(np.float32)


def _rms_norm(x):
    return (x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + 1e-6) * WEIGHT).astype(np.float32)


def _map(tmp_path) -> str:
    np.save(tmp_path / "norm.1.npy", WEIGHT)
    path = tmp_path / "parts.toml"
    path.write_text(
        '[names]\n"mlp.{layer}" = "hidden"\n"resid.{layer}" = "residual"\n'
        '[derived."l_out"]\nsum = ["hidden", "residual"]\n'
        '[derived."ffn_norm"]\nrms_norm = "residual"\nweight = "norm.{layer}.npy"\neps = 1e-6\n'
        '[derived."Qcur@add"]\nof = "qkv"\nslice = "0:4"\n'
    )
    return str(path)


def _reference(tmp_path, write=write_frames, values=10):
    recs = []
    for t in range(3):
        qkv = np.concatenate([HIDDEN[t, :4], RESIDUAL[t, :4]])
        recs += [
            record("Qcur", qkv[:4].copy(), token_idx=t, layer=1, stage="add", seq=4 * t, values=values),
            record("ffn_norm", _rms_norm(RESIDUAL[t]), token_idx=t, layer=1, seq=4 * t + 1, values=values),
            record("l_out", HIDDEN[t] + RESIDUAL[t], token_idx=t, layer=1, seq=4 * t + 2, values=values),
        ]
    return write(tmp_path / "ref", recs)


def _parts(tmp_path, write=write_frames, skip=None, bias=0.0, values=10):
    recs: list[RecordInput] = []
    for t in range(3):
        qkv = np.concatenate([HIDDEN[t, :4] + bias, RESIDUAL[t, :4]])
        for name, arr in (("qkv", qkv), ("mlp.1", HIDDEN[t]), ("resid.1", RESIDUAL[t])):
            if (name, t) != skip:
                recs.append(record(name, arr, token_idx=t, layer=1, seq=len(recs), values=values))
    return write(tmp_path / "parts", recs)


def test_derived_checkpoints_meet_the_ones_a_reference_logs(tmp_path):
    report = compare(_reference(tmp_path), _parts(tmp_path), CompareOptions(maps_b=[_map(tmp_path)], detail=True))
    assert report.status == "ok", render_text(report)
    derived = {(p.checkpoint, p.stage): p for p in report.findings.kept_pairs()}
    assert set(derived) == {("Qcur", "add"), ("ffn_norm", None), ("l_out", None)}
    assert derived[("l_out", None)].metrics["max_abs"] == 0  # f32 + f32, as the engine adds
    assert derived[("ffn_norm", None)].metrics["max_abs"] < 1e-6
    alignment = derived[("l_out", None)].alignment
    assert alignment is not None and alignment.how[1] == "derived: hidden + residual"
    assert "derived: hidden + residual" in render_text(report)


def test_summaries_derive_what_their_leading_values_allow(tmp_path):
    ref, parts = _reference(tmp_path, write_jsonl, values=3), _parts(tmp_path, write_jsonl, values=3)
    report = compare(ref, parts, CompareOptions(maps_b=[_map(tmp_path)], detail=True))
    pairs = {(p.checkpoint, p.token_idx): p for p in report.findings.kept_pairs()}
    assert {p.basis for p in pairs.values()} == {"bounds"}
    assert pairs[("l_out", 0)].metrics["n"] == 3  # the sum of the parts' first 3 values
    norm = pairs[("ffn_norm", 0)]  # a norm needs every element: no leading values, nothing measured
    assert norm.metrics["n"] == 0 and norm.values[1] == [] and norm.tier == "undecided"


def test_a_wrong_part_shows_in_the_derived_checkpoint(tmp_path):
    report = compare(_reference(tmp_path), _parts(tmp_path, bias=0.25), CompareOptions(maps_b=[_map(tmp_path)]))
    assert report.first is not None
    assert report.first.checkpoint == "Qcur" and report.first.metrics["max_abs"] == pytest.approx(0.25)


def test_a_key_missing_a_part_is_counted_and_its_checkpoint_left_unmatched(tmp_path):
    parts = _parts(tmp_path, skip=("resid.1", 2))
    report = compare(_reference(tmp_path), parts, CompareOptions(maps_b=[_map(tmp_path)]))
    assert any("1 key(s) lacked a part of hidden + residual" in m.diagnostic.message for m in report.malformed)
    assert {(u.key["checkpoint"], u.key["token_idx"]) for u in report.unmatched_on("a")} == {
        ("l_out", 2),
        ("ffn_norm", 2),
    }


def test_a_missing_weight_file_is_reported_not_raised(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[derived."ffn_norm"]\nrms_norm = "residual"\nweight = "nowhere.{layer}.npy"\n')
    parts = write_frames(tmp_path / "p", [record("residual", RESIDUAL[0], token_idx=0, layer=1)])
    report = compare(parts, parts, CompareOptions(maps_b=[str(path)]))
    assert any("cannot read the weight" in m.diagnostic.message for m in report.malformed)


@pytest.mark.parametrize(
    "text, message",
    [
        ('[derived."x"]\nsum = ["a"]\n', "at least two parts"),
        ('[derived."x"]\nof = "a"\nsum = ["a", "b"]\n', "exactly one of"),
        ('[derived."x"]\nrms_norm = "a"\n', "needs weight"),
        ('[derived."x"]\nof = "a"\nslice = "z"\n', "integers"),
        ('[derived."x"]\nof = "a"\ncolour = 1\n', "unknown key"),
        ("[derived]\nx = 1\n", "must be a table"),
    ],
)
def test_bad_derived_entries_are_clear_errors(tmp_path, text, message):
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(OrchlogError, match=message):
        load_maps([str(path)])
