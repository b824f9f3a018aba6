"""Bug flags: parsed from names, combined, unknown names refused."""

from __future__ import annotations

import pytest

from examples.numpy_engine.bugs import ALL_BUGS, Bug


def test_names_parse_case_insensitively_and_combine():
    assert Bug.parse("no_qkv_bias,ROPE_K_PER_Q_HEAD") == Bug.NO_QKV_BIAS | Bug.ROPE_K_PER_Q_HEAD


def test_an_empty_list_is_the_clean_engine():
    assert Bug.parse("") == Bug.NONE


def test_an_unknown_name_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="transposed_embedding"):
        Bug.parse("off_by_one")


def test_every_bug_is_there():
    assert {b.name for b in ALL_BUGS} == {
        "TRANSPOSED_EMBEDDING",
        "NO_QKV_BIAS",
        "ROPE_K_PER_Q_HEAD",
        "EPS_FROM_WRONG_KEY",
        "NORM_WEIGHT_TWICE",
        "SKIPPED_ATTN_RESIDUAL",
        "LAST_LAYER_NO_V_BIAS",
        "BF16_FFN_OUT",
        "DECODE_POSITION_OFF_BY_ONE",
        "ATTN_NORM_WITHOUT_WEIGHT",
        "SWAPPED_SWIGLU",
        "ROPE_ADJACENT_PAIRS",
        "KQ_UNSCALED",
        "EPS_HARD_CODED",
    }
