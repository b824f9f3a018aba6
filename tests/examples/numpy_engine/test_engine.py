"""The clean NumPy engine: KV cache consistency, and the stages it reports."""

from __future__ import annotations

from collections import Counter

import numpy as np

from examples.numpy_engine.engine import NumpyQwen2Engine
from examples.numpy_engine.model import load_model
from examples.numpy_engine.observe import AFTER_BLOCKS, BEFORE_BLOCKS, PER_BLOCK
from examples.numpy_engine.run import run_numpy_engine
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from tests.examples.conftest import AGREEMENT_ATOL, assert_logits_of_every_position


class Recorder:
    def __init__(self) -> None:
        self.records: list[tuple] = []

    def __call__(self, checkpoint, layer, token_idx, step, array, stage=None) -> None:
        self.records.append((checkpoint, stage, layer, token_idx, step, array.copy()))


def test_logits_cover_every_position_in_float32(numpy_logits):
    assert_logits_of_every_position(numpy_logits)


def test_cached_decode_steps_match_one_pass_over_all_tokens(tiny_gguf, numpy_logits):
    logits = run_numpy_engine(tiny_gguf, DEFAULT_SCENARIO.as_one_pass())
    np.testing.assert_allclose(logits, numpy_logits, rtol=0, atol=AGREEMENT_ATOL)


def test_a_second_run_starts_from_an_empty_cache(tiny_gguf):
    engine = NumpyQwen2Engine(load_model(tiny_gguf))
    assert np.array_equal(engine.run(DEFAULT_SCENARIO), engine.run(DEFAULT_SCENARIO))


def test_observing_does_not_change_the_result(tiny_gguf, numpy_logits):
    assert np.array_equal(run_numpy_engine(tiny_gguf, observe=Recorder()), numpy_logits)


def test_every_declared_stage_is_reported_in_order_once_per_token(tiny_gguf):
    recorder = Recorder()
    run_numpy_engine(tiny_gguf, observe=recorder)
    seen = Counter((checkpoint, stage, layer) for checkpoint, stage, layer, *_ in recorder.records)
    expected: list[tuple[str, str | None, int | None]] = [(c, s, None) for c, s in BEFORE_BLOCKS]
    expected += [(c, s, layer) for layer in range(TINY.n_layer) for c, s in PER_BLOCK]
    expected += [(c, s, None) for c, s in AFTER_BLOCKS]
    assert list(seen) == expected
    assert all(count == DEFAULT_SCENARIO.n_positions for count in seen.values())


def test_records_carry_the_position_and_the_step_of_their_token(tiny_gguf):
    recorder = Recorder()
    run_numpy_engine(tiny_gguf, observe=recorder)
    steps = {token: step for c, _, _, token, step, _ in recorder.records if c == "embd"}
    n_prompt = len(DEFAULT_SCENARIO.prompt)
    assert steps == {p: 0 if p < n_prompt else p - n_prompt + 1 for p in range(DEFAULT_SCENARIO.n_positions)}


def test_shapes_are_per_token_and_heads_are_split_after_rope(tiny_gguf):
    recorder = Recorder()
    run_numpy_engine(tiny_gguf, observe=recorder)
    arrays = {(c, s): a for c, s, layer, token, _, a in recorder.records if token == 3 and layer in (0, None)}
    assert arrays[("embd", None)].shape == (TINY.n_embd,)
    assert arrays[("Kcur", "add")].shape == (TINY.n_embd_kv,)
    assert arrays[("Qcur", "rope")].shape == (TINY.n_head, TINY.head_dim)
    assert arrays[("result_output", None)].shape == (TINY.n_vocab,)


def test_attention_weights_span_the_cells_each_token_attends_to(tiny_gguf):
    recorder = Recorder()
    run_numpy_engine(tiny_gguf, observe=recorder)
    probs = {token: a for c, _, layer, token, _, a in recorder.records if c == "kq_soft_max" and layer == 0}
    n_prompt = len(DEFAULT_SCENARIO.prompt)
    # In the prompt pass every token's row spans the positions up to its own, as the ggml adapter logs them.
    assert probs[3].shape == (TINY.n_head, 4)
    np.testing.assert_allclose(probs[3].sum(axis=-1), 1.0, rtol=1e-6)
    # A decode step attends to everything cached so far, itself included.
    assert probs[n_prompt].shape == (TINY.n_head, n_prompt + 1)
