"""Field values from untrusted input: what readers accept, and the clear ValueError for the rest."""

from __future__ import annotations

import math

import pytest

from orchlog.read import fields


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 1e400, math.nan, 3.0, True, "3", None, [1]])
def test_an_integer_field_takes_int64_values_only(value):
    with pytest.raises(ValueError, match="token_idx"):
        fields.integer(value, "token_idx")


def test_int64_limits_and_negative_keys_pass_for_validate_to_judge():
    assert fields.integer(2**63 - 1, "seq") == 2**63 - 1
    assert fields.optional_integer(-1, "layer") == -1 and fields.optional_integer(None, "layer") is None


def test_legacy_integers_may_be_integral_floats_or_digit_strings_but_not_infinite():
    assert fields.lenient_integer(3.0, "seq") == 3 and fields.lenient_integer(" 7", "seq") == 7
    with pytest.raises(ValueError):
        fields.lenient_integer(math.inf, "token_idx")


def test_a_shape_is_a_list_of_counts_whose_product_fits_in_int64():
    assert fields.shape([2, 3]) == (2, 3) and fields.shape([]) == ()
    for bad in ("[2,3]", [2, -1], [2**40, 2**40], [1.5]):
        with pytest.raises(ValueError):
            fields.shape(bad)


def test_numbers_take_the_non_finite_spellings_and_ints_past_the_float_range_as_infinities():
    nan = fields.number("NaN")
    assert nan is not None and math.isnan(nan) and fields.number("-Infinity") == -math.inf
    assert fields.number(10**400) == math.inf and fields.number(-(10**400)) == -math.inf
    bad: object
    for bad in ("nan", "1.5", True, [1.0], {}):
        with pytest.raises(ValueError):
            fields.number(bad)


def test_meta_is_an_object_of_scalars():
    assert fields.meta(None) == {} and fields.meta({"a": 1, "b": None, "c": "x"}) == {"a": 1, "b": None, "c": "x"}
    for bad in ([1], {"a": [1]}, {"a": {"b": 1}}, {"a": 2**64}):
        with pytest.raises(ValueError):
            fields.meta(bad)


def test_a_header_nested_deeper_than_the_limit_is_refused_without_recursion():
    deep: dict = {}
    node = deep
    for _ in range(100_000):  # far past Python's recursion limit
        node["a"] = {}
        node = node["a"]
    assert fields.depth(deep) == 100_001
    with pytest.raises(ValueError, match="nested deeper"):
        fields.header({"orchlog": 1, "config": deep})
    assert fields.header({"orchlog": 1, "config": {"x": [1, 2]}})["orchlog"] == 1


def test_a_hash_is_ascii_text_of_at_most_64_characters():
    assert fields.blake3("ab" * 32) == "ab" * 32 and fields.blake3("XYZ") == "XYZ" and fields.blake3("") is None
    for bad in ("é" * 64, "a" * 65, 12):
        with pytest.raises(ValueError):
            fields.blake3(bad)


def test_data_fits_only_a_known_dtype_with_numel_elements_and_a_shape_that_makes_numel():
    assert fields.data_fits(24, "f32", 6, (2, 3))
    assert not fields.data_fits(24, "f33", 6, (2, 3))
    assert not fields.data_fits(20, "f32", 6, (2, 3))
    assert not fields.data_fits(24, "f32", 6, (2, 2))
    assert fields.data_fits(0, "bf16", 0, (0, 5))


def test_messages_show_long_or_nested_values_briefly():
    assert len(fields.shown("x" * 10_000)) <= 40 and fields.shown([[1]]) == "(a list)"
