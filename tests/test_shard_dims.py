"""The dims notation: SGLang's current and older spellings, fused sections and GQA groups, as Dims and
as the plan that puts pieces together."""

from __future__ import annotations

import pytest

from orchlog.shard_dims import Section, parse, plan


@pytest.mark.parametrize(
    "text, names, split, partial, replicated",
    [
        ("s h[tp]", ("s", "h"), 1, False, False),
        ("s h(tp)", ("s", "h"), 1, False, False),
        ("h[tp:partial]", ("h",), None, True, False),
        ("h(tp,partial)", ("h",), None, True, False),
        ("(a*b)[tp] c", ("a*b", "c"), 0, False, False),
        ("1 t h # tp:replicated dp:=moe_dp", ("1", "t", "h"), None, False, True),
        ("b s[cp:zigzag] h[tp:sharded]", ("b", "s", "h"), 2, False, False),
    ],
)
def test_both_spellings_name_the_axes_and_the_split(text, names, split, partial, replicated):
    d = parse(text)
    assert (d.names, d.split, d.partial, d.replicated) == (names, split, partial, replicated)


def test_the_token_axis_and_other_parallelisms_are_kept():
    d = parse("b s[cp:zigzag] h[tp]")
    assert d.token_axis == 1 and d.other == ("cp on axis 1",)


def test_sections_and_groups_plan_which_slice_of_which_rank_goes_where():
    d = parse("t (q=64|k=32/2|v=32/2)[tp]")
    assert d.sections == (Section("q", 64), Section("k", 32, 2), Section("v", 32, 2))
    # four ranks: each holds 16 of q, and 16 of k and v (one of two KV heads, on two ranks each)
    assert plan(d, 48, 4) == [
        (0, 0, 16),
        (1, 0, 16),
        (2, 0, 16),
        (3, 0, 16),
        (0, 16, 32),
        (2, 16, 32),
        (0, 32, 48),
        (2, 32, 48),
    ]
    assert plan(parse("t h[tp:groups=2]"), 16, 4) == [(0, 0, 16), (2, 0, 16)]
    assert plan(parse("t h # tp:replicated"), 8, 3) == [(0, 0, 8)]


@pytest.mark.parametrize(
    "text, message",
    [
        ("h[tp] k[tp]", "more than one axis"),
        ("h[zz]", "unknown axis"),
        ("h[tp:wide]", "unknown qualifier"),
        ("(q=4|q=4)[tp]", "named twice"),
        ("(q=0)[tp]", "no length"),
        ("h # tp:copied", "neither dp:=GROUP"),
        ("h{tp}", "is not name"),
    ],
)
def test_bad_notation_is_one_clear_error(text, message):
    with pytest.raises(ValueError, match=message):
        parse(text)
