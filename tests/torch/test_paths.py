"""Module paths: the layer a path is in, and which paths a glob picks (`*` within a component, `**` across)."""

from __future__ import annotations

import pytest

from orchlog.torch.paths import layer_of, matching

pytestmark = pytest.mark.slow  # imports torch


def test_the_first_number_in_a_path_is_its_layer():
    assert layer_of("model.layers.3.self_attn.q_proj") == 3
    assert layer_of("transformer.h.12") == 12
    assert layer_of("model.embed_tokens") is None
    assert layer_of("model.layers3x.mlp") is None


PATHS = [
    "model.embed_tokens",
    "model.layers.0",
    "model.layers.0.mlp",
    "model.layers.0.mlp.up_proj",
    "model.layers.12",
    "lm_head",
]


def test_a_star_stays_within_one_component_of_the_path():
    assert matching(PATHS, ["model.layers.*"]) == ["model.layers.0", "model.layers.12"]
    assert matching(PATHS, ["model.layers.*.mlp", "lm_head"]) == ["model.layers.0.mlp", "lm_head"]
    assert matching(PATHS, ["*.?p_proj"]) == []


def test_a_double_star_spans_components():
    assert matching(PATHS, ["**.up_proj"]) == ["model.layers.0.mlp.up_proj"]
    assert matching(PATHS, ["model.layers.**"]) == PATHS[1:5]


def test_paths_come_in_model_order_and_none_picks_all():
    assert matching(PATHS, ["lm_head", "model.embed_tokens"]) == ["model.embed_tokens", "lm_head"]
    assert matching(PATHS, None) == PATHS
    assert matching(PATHS, []) == []
