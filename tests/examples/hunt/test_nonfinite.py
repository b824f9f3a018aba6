"""A NaN planted mid-run (one element of ffn_up at layer 1, token 3, written by a kernel into the engine's own
array, so that every later stage computes on it) is written whole with ORCH_LOG_ON_NONFINITE=full, said once,
and compare's diagnosis names where it started."""

from __future__ import annotations

import numpy as np
import pytest

import orchlog
from examples.numpy_engine.run import run_numpy_engine
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario
from orchlog.compare import compare
from orchlog.llama.trace import trace_llama

pytestmark = pytest.mark.slow  # builds llama.cpp (cached)

ONE_PASS = Scenario(prompt=DEFAULT_SCENARIO.prompt + DEFAULT_SCENARIO.decode, decode=())
PLANTED = ("ffn_up", 1, 3)


def _run_with_a_nan(gguf, out):
    def observe(checkpoint, layer, token_idx, step, array, stage=None):
        if (checkpoint, layer, token_idx) == PLANTED:
            array[5] = np.nan  # the engine's own row: what follows computes on it
        orchlog.log(checkpoint, np.ascontiguousarray(array), token_idx=token_idx, layer=layer, stage=stage,
                    step=step, token_id=ONE_PASS.prompt[token_idx])  # fmt: skip

    assert orchlog.configure(path=str(out), team="numpy+nan", on_nonfinite="full", mode="summary", select="")
    try:
        run_numpy_engine(gguf, ONE_PASS, observe=observe)
    finally:
        orchlog.close()
    return out


def test_the_planted_nan_is_written_whole_and_the_diagnosis_names_its_origin(tiny_gguf, tmp_path, capfd):
    reference = trace_llama(tiny_gguf, tmp_path / "llama.jsonl", tokens=ONE_PASS.prompt, n_predict=0,
                            mode="summary", quiet=True).path  # fmt: skip
    capfd.readouterr()
    ours = _run_with_a_nan(tiny_gguf, tmp_path / "ours.jsonl")
    said = [line for line in capfd.readouterr().err.splitlines() if "NaN or Inf" in line]
    assert len(said) == 1 and "'ffn_up' token_idx=3 layer=1" in said[0]
    whole = [r for r in orchlog.open_trace(ours) if r.full_reason]
    assert [(r.checkpoint, r.layer, r.token_idx, r.full_reason) for r in whole] == [(*PLANTED, "nonfinite")]
    assert whole[0].values is not None
    assert len(whole[0].values) == 128 and np.isnan(whole[0].values[5])

    report = compare(str(reference), str(ours))
    first = report.first
    assert first is not None
    assert (first.checkpoint, first.layer, first.token_idx) == PLANTED
    findings = [f.kind for d in report.diagnosis[:1] for f in d.findings]
    assert findings[:1] == ["nonfinite_origin"]
