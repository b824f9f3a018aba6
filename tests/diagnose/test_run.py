"""Diagnosing a compare's pairs from the traces on disk: the catalogue, locality and growth together."""

from __future__ import annotations

import os

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.diagnose.neighbours import Target
from orchlog.diagnose.run import Walked, diagnose_targets
from orchlog.read.paths import open_trace
from tests.diagnose.runs import missing_bias_from_layer, traces


def _diagnose(a, b, target):
    names = lambda batch: batch  # noqa: E731 - no name map
    return diagnose_targets(
        open_trace(a),
        open_trace(b),
        [("first_divergence", target)],
        Walked(("checkpoint", "layer", "stage", "token_idx", "step", "rank"), names, lambda n: False),
    )[0]


def test_a_missing_bias_is_an_offset_introduced_at_its_stage(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1))
    d = _diagnose(a, b, Target("Qcur", 1, "add", 2, 0))
    assert d.basis == "tensors"
    kinds = [f.kind for f in d.findings]
    assert "offset" in kinds and "equals_other_checkpoint" in kinds
    assert d.locality.verdict == "introduced"
    assert d.growth.verdict == "jump"


def test_a_pair_that_is_not_there_says_so(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1))
    d = _diagnose(a, b, Target("nowhere", 1, None, 2, 0))
    assert not d.ran and "not found" in d.notes[0]


def test_summaries_are_diagnosed_thinly_and_say_why(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1), summary=True)
    d = _diagnose(a, b, Target("Qcur", 1, "add", 2, 0))
    assert d.basis == "summary" and any("full mode" in n for n in d.notes)
    assert all(f.confidence <= 0.6 for f in d.findings)


def test_a_trace_that_cannot_be_read_twice_is_not_diagnosed(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(1))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    trace_b = open_trace(b)
    trace_b.path = str(fifo)
    d = diagnose_targets(
        open_trace(a),
        trace_b,
        [("first_divergence", Target("Qcur", 1, "add", 2, 0))],
        Walked(("checkpoint",), lambda x: x, lambda n: False),
    )[0]
    assert not d.ran and "cannot be read a second time" in d.notes[0]


def test_a_failure_inside_the_diagnosis_leaves_the_compare_standing(tmp_path, monkeypatch):
    a, b = traces(tmp_path, missing_bias_from_layer(1))

    def broken(*args, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr("orchlog.diagnose.run.find_signatures", broken)
    monkeypatch.delenv("ORCHLOG_DEBUG", raising=False)
    report = compare(a, b, CompareOptions(threshold=1e-3))
    assert report.status == "diverged" and "boom" in report.diagnosis[0].notes[0]


def test_the_worst_offenders_can_be_diagnosed_too(tmp_path):
    a, b = traces(tmp_path, missing_bias_from_layer(0))
    report = compare(a, b, CompareOptions(threshold=1e-3, diagnose_worst=2))
    roles = [d.role for d in report.diagnosis]
    assert roles[0] == "first_divergence" and roles.count("worst") >= 1
    assert np.all([d.ran for d in report.diagnosis])
