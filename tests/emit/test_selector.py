"""ORCH_LOG_SELECT semantics, checked against the shared selector vectors."""

from __future__ import annotations

import pytest

from orchlog import selector
from tests.conftest import load_vectors

DOC = load_vectors("selector.json")


@pytest.mark.parametrize("case", DOC["valid"], ids=lambda c: c["selector"] or "<empty>")
def test_valid_selectors_match_as_the_vectors_say(case):
    sel = selector.parse(case["selector"])
    got = [True if sel is None else sel.matches(k) for k in DOC["keys"]]
    assert got == case["matches"]


@pytest.mark.parametrize("text", DOC["invalid"])
def test_invalid_selectors_are_rejected_with_the_clause_named(text):
    with pytest.raises(selector.SelectorError, match="clause"):
        selector.parse(text)


def test_null_fields_never_match_a_clause_on_them():
    sel = selector.parse("layer=0-")
    assert sel is not None
    assert not sel.matches({"layer": None})
    assert sel.matches({"layer": 40})
