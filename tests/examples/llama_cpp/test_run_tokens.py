"""run_tokens.cpp on the tiny Qwen2: logits of every position, reproducible,
unchanged by logging, and a graph whose tensors the NumPy engine's stages
can meet (seen through the orchlog ggml adapter)."""

from __future__ import annotations

import numpy as np
import pytest

import orchlog
from examples.llama_cpp.run import TraceSettings, run_llama_cpp
from examples.numpy_engine.observe import AFTER_BLOCKS, BEFORE_BLOCKS, PER_BLOCK
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from tests.examples.conftest import AGREEMENT_ATOL, assert_logits_of_every_position

pytestmark = pytest.mark.slow  # builds llama.cpp (cached)


@pytest.fixture(scope="module")
def graph(tiny_gguf, run_tokens_program, tmp_path_factory):
    """Every record of a summary-mode run: what the graph holds, cheaply."""
    path = tmp_path_factory.mktemp("graph") / "graph.jsonl"
    run_llama_cpp(tiny_gguf, program=run_tokens_program, trace=TraceSettings(path, mode="summary"))
    return list(orchlog.open_trace(path))


def test_logits_cover_every_position_in_float32(llama_logits):
    assert_logits_of_every_position(llama_logits)


def test_two_runs_give_bit_identical_logits(tiny_gguf, run_tokens_program, llama_logits):
    assert np.array_equal(run_llama_cpp(tiny_gguf, program=run_tokens_program), llama_logits)


def test_cached_decode_steps_match_one_pass_over_all_tokens(tiny_gguf, run_tokens_program, llama_logits):
    logits = run_llama_cpp(tiny_gguf, DEFAULT_SCENARIO.as_one_pass(), program=run_tokens_program)
    np.testing.assert_allclose(logits, llama_logits, rtol=0, atol=AGREEMENT_ATOL)


def test_logging_every_graph_tensor_leaves_the_logits_bit_identical(
    tiny_gguf, run_tokens_program, llama_logits, tmp_path
):
    trace = TraceSettings(tmp_path / "all.bin")
    assert np.array_equal(run_llama_cpp(tiny_gguf, program=run_tokens_program, trace=trace), llama_logits)


def test_each_step_logs_the_tokens_at_its_positions(graph):
    for call in DEFAULT_SCENARIO.calls():
        l_out = [r for r in graph if r.step == call.step and r.checkpoint == "l_out" and r.layer == 0]
        assert [r.token_idx for r in l_out] == list(call.positions)


def test_qcur_records_each_op_after_the_first_as_its_stage(graph):
    stages = [r.stage for r in graph if r.checkpoint == "Qcur" and r.layer == 0 and r.token_idx == 0]
    assert stages == [None, "add", "reshape", "rope"]


def test_every_numpy_engine_stage_has_a_llama_cpp_record_of_that_name_layer_and_stage(graph):
    logged = {(r.checkpoint, r.layer, r.stage) for r in graph if r.step == 0}
    wanted: list[tuple[str, int | None, str | None]] = [(c, None, s) for c, s in BEFORE_BLOCKS + AFTER_BLOCKS]
    wanted += [(c, layer, s) for layer in range(TINY.n_layer) for c, s in PER_BLOCK]
    assert [key for key in wanted if key not in logged] == []
