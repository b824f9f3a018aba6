"""Each token's earliest failing pair is kept as a compact copy of its row, and its view (with both
records) is made only when the report asks: a run whose every token fails makes views for the diverging
token alone, and the view it makes is the one the walk would have made at once."""

from __future__ import annotations

import pickle

import numpy as np

from orchlog.compare import CompareOptions, compare
from orchlog.compare.engine import walk
from tests.compare.runs import offset_pair

TOKENS, LAYERS = 30, 4


def test_only_the_diverging_tokens_view_is_made(tmp_path):
    a, b = offset_pair(tmp_path, 0.25, TOKENS, LAYERS, width=64)
    report = compare(a, b, CompareOptions(diagnose=False))
    states = report.findings.tokens
    assert len(states) == TOKENS and all(s.suspect_at is not None for s in states.values())
    made = [tok for tok, s in states.items() if s.suspect_at is not None and s.suspect_at.made]
    assert made == [0], made
    first = report.first
    assert first is not None and first.records is not None
    assert (first.token_idx, first.layer, first.checkpoint, first.tier) == (0, 0, "l_out", "fail")
    a_tensor, b_tensor = (r.tensor() for r in first.records)
    assert a_tensor is not None and b_tensor is not None
    np.testing.assert_allclose(b_tensor - a_tensor, 0.25, rtol=1e-6)


def test_a_view_made_late_is_the_view_made_at_once(tmp_path):
    a, b = offset_pair(tmp_path, 0.25, TOKENS, LAYERS, width=64)
    findings = compare(a, b, CompareOptions(diagnose=False)).findings
    for tok in (7, 29):
        state = findings.tokens[tok]
        view = state.first_suspect
        assert view is not None and state.suspect_at is not None
        assert (view.token_idx, view.layer, view.tier) == (tok, 0, "fail")
        assert view.rank_key == state.suspect_at.rank_key
        assert view.metrics["max_abs"] > 0.2 and view.values[1][0] - view.values[0][0] == np.float32(0.25)


def test_a_shippable_parts_tokens_pickle_with_their_views_made_and_no_records(tmp_path):
    a, b = offset_pair(tmp_path, 0.25, TOKENS, LAYERS, width=64)
    part = walk(a, b, CompareOptions(diagnose=False)).shippable()
    tokens = pickle.loads(pickle.dumps(part.findings.tokens))  # what leaves the process (Ray: cloudpickle)
    view = tokens[3].first_suspect
    assert view is not None and view.records is None and (view.token_idx, view.tier) == (3, "fail")
