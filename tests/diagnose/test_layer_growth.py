"""Accumulation or a jump across layers."""

from __future__ import annotations

from orchlog.diagnose.layer_growth import layer_growth
from orchlog.diagnose.locality import PairError


def _errors(*rel):
    return [(layer, PairError(r, r, True)) for layer, r in enumerate(rel)]


def test_a_sudden_rise_is_a_jump():
    g = layer_growth(_errors(1e-7, 2e-7, 0.3, 0.5), 2)
    assert g is not None
    assert g.verdict == "jump" and g.factor is not None and g.factor > 1e5 and "at this layer" in g.message


def test_a_steady_rise_from_above_noise_is_accumulation():
    g = layer_growth(_errors(2e-5, 6e-5, 2e-4, 6e-4), 3)
    assert g is not None
    assert g.verdict == "accumulation" and "per layer" in g.message


def test_the_first_layer_or_no_layer_has_nothing_to_grow_from():
    assert layer_growth(_errors(0.3, 0.4), 0) is None
    assert layer_growth(_errors(0.3, 0.4), None) is None


def test_anything_else_is_unclear():
    g = layer_growth(_errors(1e-3, 1e-2, 1e-6, 5e-6), 3)
    assert g is not None and g.verdict == "unclear"
