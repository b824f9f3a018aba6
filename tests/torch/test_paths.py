"""Module paths: the layer a path is in, and which paths a glob picks."""
from __future__ import annotations

import pytest

from orchlog.torch.paths import layer_of, matching

pytestmark = pytest.mark.slow  # imports torch


def test_the_first_number_in_a_path_is_its_layer():
    assert layer_of("model.layers.3.self_attn.q_proj") == 3
    assert layer_of("transformer.h.12") == 12
    assert layer_of("model.embed_tokens") is None
    assert layer_of("model.layers3x.mlp") is None


def test_globs_pick_paths_in_model_order_and_none_picks_all():
    paths = ["model.embed_tokens", "model.layers.0", "model.layers.0.mlp", "model.layers.1", "lm_head"]
    assert matching(paths, ["model.layers.*", "lm_head"]) == paths[1:]
    assert matching(paths, ["model.layers.?"]) == ["model.layers.0", "model.layers.1"]
    assert matching(paths, None) == paths
    assert matching(paths, []) == []
