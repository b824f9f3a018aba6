"""config.json: the seed's shape, the general one, and the errors that keep a typo from loosening a guardrail."""

from __future__ import annotations

import json

import pytest

from orchlog.errors import OrchlogError
from orchlog.guardrail.config import default_matrix, load_matrix, parse_config


def test_the_seed_shape_declares_kv_aligned_and_seeds_and_the_metadata_to_expect():
    m = parse_config(
        {"kv_aligned": [0, 1], "seeds": [0, 1, 2], "dtype": "bf16", "prompt_len": 512, "gen_len": 128}, "config.json"
    )
    assert m.declared == {"kv_aligned": ("0", "1"), "seed": ("0", "1", "2")}
    assert m.sides == ("prefill", "decode") and m.metadata == {"dtype": "bf16", "prompt_len": 512, "gen_len": 128}
    assert m.requires_match({"kv_aligned": "1", "seed": "0"}) and not m.requires_match({"kv_aligned": "0", "seed": "0"})


def test_without_a_config_the_seed_layout_is_used_and_nothing_is_declared(tmp_path):
    m = load_matrix(tmp_path)
    assert m == default_matrix() and m.declared is None and m.source is None


def test_the_general_shape_takes_pattern_axes_sides_and_rule_from_config():
    m = parse_config(
        {
            "run_dirs": "ab/{dtype}/seed_{seed}",
            "axes": {"seed": [0, 1], "dtype": ["f32", "bf16"]},
            "sides": ["batch_1", "batch_8"],
            "must_match": {"dtype": ["f32"]},
            "metadata": {"prompt_len": 64},
        },
        "c.json",
    )
    assert m.axes == ("dtype", "seed") and m.declared == {"dtype": ("f32", "bf16"), "seed": ("0", "1")}
    assert m.sides == ("batch_1", "batch_8") and m.metadata == {"prompt_len": 64}
    assert m.requires_match({"dtype": "f32", "seed": "1"}) and not m.requires_match({"dtype": "bf16", "seed": "1"})


def test_an_empty_must_match_rule_means_every_pair_must_match():
    m = parse_config({"run_dirs": "{batch}", "axes": {"batch": [1, 8]}, "must_match": {}}, "c.json")
    assert m.requires_match({"batch": "8"}) and m.must_match_text() == "always"


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"kv_aligned": [0, 1], "seeds": [0], "must_macth": {}}, "unknown key 'must_macth'"),
        ({"kv_aligned": [0, 1]}, "declares no values for axis 'seed'"),
        ({"kv_aligned": [0, 1], "seeds": [0], "axes": {}}, "not both"),
        ({"run_dirs": "{batch}", "axes": {"batch": [1, 8]}}, "say which runs must match"),
        ({"run_dirs": "{batch}", "axes": {"batch": [1, 8], "seed": [0]}, "must_match": {}}, "axis 'seed' is not in"),
        ({"run_dirs": "{batch}", "axes": {"batch": [1, 1]}, "must_match": {}}, "distinct values"),
        ({"run_dirs": "{batch}", "axes": {"batch": [1.5]}, "must_match": {}}, "is not an axis value"),
        ({"run_dirs": "{batch}", "axes": {"batch": [1]}, "must_match": {"dtype": ["f32"]}}, "names axis 'dtype'"),
        ({"kv_aligned": [1], "seeds": [0], "sides": ["prefill"]}, "sides must name two different subdirectories"),
        ({"kv_aligned": [1], "seeds": [0], "run_dirs": "/abs/{kv_aligned}/{seed}"}, "c.json: run directory pattern"),
    ],
)
def test_mistakes_in_config_json_are_errors_that_say_what_is_wrong(doc, message):
    with pytest.raises(OrchlogError, match=message):
        parse_config(doc, "c.json")


def test_notes_are_allowed_beside_the_matrix():
    m = parse_config({"description": "nightly", "_runner": "v2", "kv_aligned": [1], "seeds": [0]}, "c.json")
    assert m.declared == {"kv_aligned": ("1",), "seed": ("0",)}


def test_malformed_config_json_is_reported_with_its_line(tmp_path):
    (tmp_path / "config.json").write_text('{\n  "kv_aligned": [0, 1],\n  "seeds": [0 1]\n}\n')
    with pytest.raises(OrchlogError, match=r"config.json:3: malformed JSON \(Expecting ',' delimiter"):
        load_matrix(tmp_path)


def test_a_config_elsewhere_can_be_named(tmp_path):
    other = tmp_path / "matrix.json"
    other.write_text(json.dumps({"kv_aligned": [1], "seeds": [4]}))
    assert load_matrix(tmp_path / "artifacts", other).declared == {"kv_aligned": ("1",), "seed": ("4",)}
    with pytest.raises(OrchlogError, match="cannot read"):
        load_matrix(tmp_path, tmp_path / "missing.json")
