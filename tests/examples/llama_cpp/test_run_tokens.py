"""run_tokens.cpp on the tiny Qwen2: logits of every position, reproducible,
and a graph whose tensor names the NumPy engine's stages can meet."""
from __future__ import annotations

import numpy as np
import pytest

from examples.llama_cpp.run import read_graph_names, run_llama_cpp
from examples.numpy_engine.observe import AFTER_BLOCKS, BEFORE_BLOCKS, PER_BLOCK
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from tests.examples.conftest import AGREEMENT_ATOL, assert_logits_of_every_position

pytestmark = pytest.mark.slow  # builds llama.cpp (cached)


@pytest.fixture(scope="module")
def graph(tiny_gguf, run_tokens_program, tmp_path_factory):
    path = tmp_path_factory.mktemp("graph") / "names.tsv"
    run_llama_cpp(tiny_gguf, program=run_tokens_program, graph_names=path)
    return read_graph_names(path)


def test_logits_cover_every_position_in_float32(llama_logits):
    assert_logits_of_every_position(llama_logits)


def test_two_runs_give_bit_identical_logits(tiny_gguf, run_tokens_program, llama_logits):
    assert np.array_equal(run_llama_cpp(tiny_gguf, program=run_tokens_program), llama_logits)


def test_cached_decode_steps_match_one_pass_over_all_tokens(tiny_gguf, run_tokens_program, llama_logits):
    logits = run_llama_cpp(tiny_gguf, DEFAULT_SCENARIO.as_one_pass(), program=run_tokens_program)
    np.testing.assert_allclose(logits, llama_logits, rtol=0, atol=AGREEMENT_ATOL)


def test_the_eval_callback_sees_one_graph_per_step_with_all_tokens_of_the_step(graph):
    steps = sorted({t.step for t in graph})
    assert steps == [call.step for call in DEFAULT_SCENARIO.calls()]
    for call in DEFAULT_SCENARIO.calls():
        l_out = [t for t in graph if t.step == call.step and t.name == "l_out-0"]
        assert [t.ne[1] for t in l_out] == [len(call.tokens)]


def test_qcur_is_one_name_reused_after_each_op(graph):
    ops = [t.op for t in graph if t.step == 0 and t.name == "Qcur-0"]
    assert ops == ["MUL_MAT", "ADD", "RESHAPE", "ROPE"]


def test_every_numpy_engine_stage_has_a_llama_cpp_tensor_of_that_name_and_op(graph):
    names = {(t.name, t.op) for t in graph if t.step == 0}
    # llama.cpp does not name o_proj's output (see examples/numpy_engine/observe.py).
    unnamed = {"attn_out"}
    wanted = [(c, s) for c, s in BEFORE_BLOCKS + AFTER_BLOCKS if c not in unnamed]
    wanted += [(f"{c}-{layer}", s) for layer in range(TINY.n_layer) for c, s in PER_BLOCK if c not in unnamed]
    for name, stage in wanted:
        matching_ops = {op for n, op in names if n == name}
        assert matching_ops, f"no llama.cpp tensor named {name}"
        if stage is not None:
            assert stage.upper() in matching_ops, f"{name} is never the output of {stage}: {matching_ops}"
