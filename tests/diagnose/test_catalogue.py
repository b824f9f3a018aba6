"""The catalogue: every kind has one signature, in the documented order; clean pairs claim nothing."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from orchlog.diagnose import KINDS, find_signatures
from orchlog.diagnose.signatures import CATALOGUE
from tests.diagnose.synthetic import case_of, noisy, reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "diagnose.md"


def test_every_kind_has_its_signature_in_order():
    assert tuple(CATALOGUE) == KINDS


def test_every_kind_is_documented():
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", DOCS.read_text(encoding="utf-8"), flags=re.M))
    assert set(KINDS) <= documented


def test_a_clean_pair_has_no_known_signature():
    ref = reference()
    assert find_signatures(case_of(ref, noisy(ref), shape=(4, 16))) == []


def test_findings_come_most_confident_first():
    ref = reference()
    found = find_signatures(case_of(ref, noisy(ref * 2)))
    assert [f.kind for f in found][:1] == ["scale"]
    assert all(a.confidence >= b.confidence for a, b in zip(found, found[1:]))


def test_only_the_kinds_asked_for_are_tried():
    ref = reference()
    assert find_signatures(case_of(ref, noisy(ref * 2)), kinds=("offset",)) == []


def test_values_near_the_float_range_give_only_findings_with_a_finite_confidence():
    # A damaged file's values against sound ones (from the weights mutation campaign): sums of squares overflow.
    damaged = [8.46e-19, 3.28e-310, 0.0, -1.35e235, 1.71e115, -6.49e-98, -5.37e-250, 1.43e9]
    sound = [-1.18, -1.78, -0.97, 0.81, 1.80, 1.60, -0.39, -0.009]
    with np.errstate(all="ignore"):
        found = find_signatures(case_of(np.array([damaged]), np.array([sound])))
        found += find_signatures(case_of(np.array([sound]), np.array([damaged])))
    assert all(np.isfinite(f.confidence) for f in found)


def test_whole_tensors_of_no_elements_claim_nothing_and_warn_nothing(recwarn):
    """Damaged traces can pair two empty tensors as a divergence: no signature has values to look at (a mean of
    none would print NumPy's "Mean of empty slice" on the user's stderr)."""
    empty = np.zeros((3, 0))
    assert find_signatures(case_of(empty, empty, shape=(0,))) == []
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
