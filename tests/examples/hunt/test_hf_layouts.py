"""HF's attention probabilities and KV cache meet llama.cpp's through the shipped hf_qwen2 map: its
window for llama.cpp's KV cache padded to 256 cells, and its views of HF's cache layout."""

from __future__ import annotations

import pytest

from examples.hunt.run import TOLERANCES
from examples.hunt.traces import hf_trace
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from orchlog.compare import CompareOptions, compare
from tests.examples.conftest import AGREEMENT_ATOL

pytestmark = pytest.mark.slow  # builds llama.cpp (cached), imports torch


@pytest.fixture(scope="module")
def hf_with_cache(hunt_dir):
    return hf_trace(hunt_dir / "tiny-qwen2.gguf", hunt_dir / "hf-cache.bin", cache=True)


def _pairs(report, checkpoint):
    return [p for p in report.findings.kept_pairs() if p.checkpoint == checkpoint]


def test_hf_attention_probabilities_meet_llama_cpps_kq_soft_max_on_the_window(hunt_dir, hf_with_cache):
    opts = CompareOptions(maps=["hf_qwen2"], tolerances=str(TOLERANCES), detail=True)  # no --window: the map says
    report = compare(hunt_dir / "llama.bin", hf_with_cache, opts)
    probs = _pairs(report, "kq_soft_max")
    expected = [(c.step, p, layer) for c in DEFAULT_SCENARIO.calls() for p in c.positions for layer in range(2)]
    assert sorted((p.step, p.token_idx, p.layer) for p in probs) == sorted(expected)
    assert max(p.metrics["max_abs"] for p in probs) < AGREEMENT_ATOL
    # llama.cpp's rows are cut to the cells each token attends to; HF's prompt rows span the prompt.
    n_prompt = len(DEFAULT_SCENARIO.prompt)
    third = next(p for p in probs if p.token_idx == 3)
    assert third.alignment.window.describe() == f"compared on window [4,4] of [4,4] / [4,{n_prompt}]"
    assert all(p.alignment is None for p in probs if p.token_idx >= n_prompt - 1)  # same shapes
    assert report.status == "ok"


def test_without_the_window_rows_of_other_extents_do_not_agree(hunt_dir, hf_with_cache, tmp_path):
    plain = tmp_path / "no_window.toml"
    plain.write_text('[names]\n"model.layers.{layer}.self_attn@probs" = "kq_soft_max@"\n')
    report = compare(hunt_dir / "llama.bin", hf_with_cache, CompareOptions(maps=[str(plain)], detail=True))
    probs = _pairs(report, "kq_soft_max")
    n_prompt = len(DEFAULT_SCENARIO.prompt)
    shorter = [p for p in probs if p.token_idx < n_prompt - 1]  # llama.cpp's causal rows, HF's whole prompt
    assert shorter and all(p.failed and "shapes differ" in p.reason for p in shorter)


def test_hfs_kv_cache_meets_llama_cpps_through_the_maps_views(hunt_dir, hf_with_cache):
    # The default key: both sides' cache records have no token position, in the prompt pass and in the
    # one-token decode steps alike (the adapter knows llama.cpp's cache by its name, not by its shape).
    opts = CompareOptions(maps=["hf_qwen2"], tolerances=str(TOLERANCES), detail=True)
    report = compare(hunt_dir / "llama.bin", hf_with_cache, opts)
    assert report.status == "ok"
    for name, how in (("cache_k", "slice [0]"), ("cache_v", "slice [0], transpose [1, 2]")):
        pairs = _pairs(report, name)
        assert sorted((p.step, p.layer, p.token_idx) for p in pairs) == [
            (s, layer, None) for s in range(4) for layer in range(TINY.n_layer)
        ]
        assert max(p.metrics["max_abs"] for p in pairs) < AGREEMENT_ATOL
        assert all(p.alignment.how[1].startswith(f"viewed as {how} of") for p in pairs)


def test_hfs_value_cache_without_the_transpose_is_a_divergence(hunt_dir, hf_with_cache, tmp_path):
    wrong = tmp_path / "no_transpose.toml"
    wrong.write_text(
        '[names]\n"past_key_values@value" = { name = "cache_v", stage = "", slice = "0", window = true }\n'
        '"cache_v_l{layer} (view) (permuted)" = "cache_v"\n'
    )
    opts = CompareOptions(maps=[str(wrong)], detail=True)
    pairs = _pairs(compare(hunt_dir / "llama.bin", hf_with_cache, opts), "cache_v")
    assert pairs and all(p.failed for p in pairs)
