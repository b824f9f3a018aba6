"""hf_llama's per-head view against real llama.cpp: llama.cpp run on weights whose Q and K carry
convert_hf_to_gguf.py's `llama` permutation holds HF's projections in another order; the map's view
of its per-head rows gives them back in HF's order. (The tiny model is a qwen2, whose RoPE then turns
the wrong pairs: only layer 0's projections, before any attention, still mean the same thing.)"""

from __future__ import annotations

import pytest

from examples.hunt.run import prepare
from examples.hunt.traces import llama_trace
from examples.qwen2_tiny.gguf_file import write_gguf
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from examples.qwen2_tiny.weights import make_weights, with_llama_qk_permutation
from orchlog.compare import CompareOptions, compare
from tests.examples.conftest import AGREEMENT_ATOL

pytestmark = pytest.mark.slow  # builds llama.cpp (cached), imports torch


@pytest.fixture(scope="module")
def permuted_llama(tmp_path_factory, run_tokens_program):
    weights = with_llama_qk_permutation(make_weights())
    out = tmp_path_factory.mktemp("permuted")
    return llama_trace(write_gguf(out / "permuted.gguf", weights), out / "llama.bin", program=run_tokens_program)


def _layer0(report, stage):
    return [p for p in report.findings.kept_pairs() if p.layer == 0 and p.stage == stage]


def test_llama_cpps_permuted_q_and_k_meet_hfs_projections_through_the_view(hunt_dir, permuted_llama):
    hf = prepare(hunt_dir, "hf").ours
    report = compare(permuted_llama, hf, CompareOptions(maps=["hf_llama"], detail=True))
    pairs = _layer0(report, "hf_order")
    assert sorted({p.checkpoint for p in pairs}) == ["Kcur", "Qcur"]
    assert len(pairs) == 2 * DEFAULT_SCENARIO.n_positions
    assert max(p.metrics["max_abs"] for p in pairs) < AGREEMENT_ATOL


def test_without_the_view_the_same_projections_differ(hunt_dir, permuted_llama):
    hf = prepare(hunt_dir, "hf").ours
    report = compare(permuted_llama, hf, CompareOptions(maps=["hf_qwen2"], detail=True))  # no view: flat order
    pairs = [p for p in _layer0(report, "add") if p.checkpoint in ("Qcur", "Kcur")]
    assert len(pairs) == 2 * DEFAULT_SCENARIO.n_positions and all(p.metrics["max_abs"] > 0.1 for p in pairs)
