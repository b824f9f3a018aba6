"""With f32 weights, an f32 KV cache and flash attention off, llama.cpp (ggml adapter), HF
transformers (orchlog.torch, hf_qwen2 map) and the clean NumPy engine (orchlog.log) agree on every
stage each one can observe, to about 1e-5, over the prompt pass and every decode step: the attention
scores and probabilities too, compared on the window of llama.cpp's padded KV cache."""

from __future__ import annotations

import pytest

from examples.hunt.run import prepare
from examples.hunt.stages import stage_agreement
from examples.numpy_engine.observe import AFTER_BLOCKS, BEFORE_BLOCKS, PER_BLOCK
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from orchlog.compare import compare
from tests.examples.conftest import AGREEMENT_ATOL
from tests.maps.test_shipped_maps import NOT_IN_HF

pytestmark = pytest.mark.slow  # builds llama.cpp (cached), imports torch

STAGES = [*BEFORE_BLOCKS, *PER_BLOCK, *AFTER_BLOCKS]


@pytest.mark.parametrize("engine, unobservable", [("numpy", set()), ("hf", NOT_IN_HF)])
def test_every_observable_stage_agrees_with_llama_cpp(hunt_dir, engine, unobservable):
    hunt = prepare(hunt_dir, engine)
    report = compare(hunt.reference, hunt.ours, hunt.options(detail=True))
    assert report.status == "ok"
    assert not report.unmatched_on("b")  # every record of the engine found its llama.cpp twin
    agreement = stage_agreement(report)
    assert set(agreement) == set(STAGES) - unobservable
    assert max(agreement.values()) < AGREEMENT_ATOL, agreement


def test_every_token_of_every_step_is_compared(hunt_dir):
    hunt = prepare(hunt_dir, "hf")
    report = compare(hunt.reference, hunt.ours, hunt.options(detail=True))
    steps = {(p.step, p.token_idx) for p in report.findings.kept_pairs() if p.checkpoint == "result_output"}
    assert steps == {(call.step, position) for call in DEFAULT_SCENARIO.calls() for position in call.positions}
