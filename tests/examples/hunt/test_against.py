"""One run instead of two: the NumPy engine with a bug, run against llama.cpp's summary trace
(ORCH_LOG_AGAINST), leaves whole tensors at the first divergence and its context, and orchlog compare decides
it from that one run; the clean engine against the same reference writes summaries only."""

from __future__ import annotations

import os

import pytest

import orchlog
from examples.hunt.traces import numpy_trace
from examples.numpy_engine.bugs import Bug
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario
from orchlog.compare import compare
from orchlog.llama.trace import trace_llama

pytestmark = pytest.mark.slow  # builds llama.cpp (cached)

# The default scenario's tokens in one prompt pass: what `orchlog trace llama --tokens IDS --n-predict 0` runs.
ONE_PASS = Scenario(prompt=DEFAULT_SCENARIO.prompt + DEFAULT_SCENARIO.decode, decode=())
CONTEXT = 16


@pytest.fixture(scope="module")
def reference(tiny_gguf, tmp_path_factory):
    out = tmp_path_factory.mktemp("against") / "llama.jsonl"
    return trace_llama(tiny_gguf, out, tokens=ONE_PASS.prompt, n_predict=0, mode="summary", quiet=True).path


def _against(tiny_gguf, reference, out, bugs=Bug.NONE, against=True):
    saved = os.environ.get("ORCH_LOG_AGAINST")
    os.environ["ORCH_LOG_AGAINST"] = str(reference) if against else ""
    try:
        return numpy_trace(tiny_gguf, out, bugs=bugs, scenario=ONE_PASS, mode="summary")
    finally:
        os.environ.pop("ORCH_LOG_AGAINST") if saved is None else os.environ.__setitem__("ORCH_LOG_AGAINST", saved)


def test_the_clean_engine_is_proven_within_tolerance_everywhere_and_writes_summaries_only(
    tiny_gguf, reference, tmp_path
):
    out = _against(tiny_gguf, reference, tmp_path / "clean.jsonl")
    assert [r.full_reason for r in orchlog.open_trace(out) if r.full_reason] == []


@pytest.mark.parametrize("bug", [Bug.NO_QKV_BIAS, Bug.NORM_WEIGHT_TWICE, Bug.LAST_LAYER_NO_V_BIAS])
def test_a_bug_leaves_whole_tensors_at_the_first_divergence_and_compare_decides_it(tiny_gguf, reference, bug, tmp_path):
    ours = _against(tiny_gguf, reference, tmp_path / "ours.jsonl", bug)
    records = list(orchlog.open_trace(ours))
    whole = [r for r in records if r.full_reason]
    assert [r.full_reason for r in whole] == ["against"] + ["against_context"] * CONTEXT
    assert all(r.values is not None and len(r.values) == r.numel for r in whole)  # the tensors themselves

    report = compare(str(reference), str(ours))
    first = report.first
    assert report.status != "ok" and first is not None and first.failed  # decided: no rerun needed
    assert (first.checkpoint, first.layer, first.stage, first.token_idx) == (
        whole[0].checkpoint,
        whole[0].layer,
        whole[0].stage,
        whole[0].token_idx,
    )

    # The stated size: what the summary run writes, plus every value of the 1 + ORCH_LOG_AGAINST_CONTEXT whole
    # records (at most 24 bytes a value as JSON text).
    summary_only = _against(tiny_gguf, reference, tmp_path / "summary.jsonl", bug, against=False)
    extra = ours.stat().st_size - summary_only.stat().st_size
    assert 0 < extra <= sum(24 * (r.numel or 0) for r in whole)
