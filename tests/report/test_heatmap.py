"""The heatmap's grid, binned from the Growth table's arrays: rows in execution order, tokens in columns."""

from __future__ import annotations

import numpy as np

from orchlog.compare.grading.growth import Growth
from orchlog.compare.grading.tiers import TIER_NAMES
from orchlog.report.heatmap import decode_start, heat_grid
from orchlog.strings import Strings


def _growth(tokens, layers, max_abs, severity, orders=None, failed=None, tier=None) -> Growth:
    g = Growth()
    n = len(tokens)
    names = Strings.repeat("x", n)
    g.add(
        np.asarray(tokens, dtype=np.int64),
        np.asarray(layers, dtype=np.int64),
        names,
        np.asarray(orders if orders is not None else range(n), dtype=np.int64),
        np.asarray(orders if orders is not None else range(n), dtype=np.int64),  # each pair's place in its file
        np.zeros(n, dtype=bool) if failed is None else np.asarray(failed),
        np.asarray(max_abs, dtype=np.float64),
        np.ones(n),
        np.asarray(severity, dtype=np.float64),
        np.zeros(n, dtype=np.int64) if tier is None else np.asarray(tier),
    )
    return g


def test_each_cell_holds_the_worst_of_the_tokens_it_covers():
    rng = np.random.default_rng(3)
    tokens = np.repeat(np.arange(50), 3)
    layers = np.tile(np.arange(3), 50)
    sev = rng.random(150)
    grid = heat_grid(_growth(tokens, layers, sev * 2, sev), max_columns=7)
    assert grid.group == 8 and len(grid.first_token) == 7
    assert grid.labels == ["layer 0", "layer 1", "layer 2"]
    for col, (lo, hi) in enumerate(zip(grid.first_token, grid.last_token)):
        for row in range(3):
            want = sev[(tokens >= lo) & (tokens <= hi) & (layers == row)].max()
            assert grid.severity[row, col] == want and grid.max_abs[row, col] == 2 * want


def test_rows_follow_execution_order_not_the_label_order():
    # layer 1 runs before layer 0 at every token (a model whose layers are logged out of order).
    grid = heat_grid(_growth([0, 0, 1, 1], [1, 0, 1, 0], [1, 2, 3, 4], [1, 2, 3, 4], orders=[0, 1, 2, 3]))
    assert grid.labels == ["layer 1", "layer 0"]


def test_a_window_keeps_every_row_and_only_its_tokens():
    grid = heat_grid(_growth([0, 1, 2, 3], [0, 0, 1, 1], [1, 2, 3, 4], [1, 2, 3, 4]), window=(2, 3))
    assert grid.labels == ["layer 0", "layer 1"] and grid.first_token == [2, 3]
    assert np.isnan(grid.severity[0]).all()


def test_the_decode_start_is_the_first_token_after_a_prompt_of_several():
    assert decode_start({0: 0, 1: 0, 2: 0, 3: 1, 4: 2}) == 3
    assert decode_start({0: 0, 1: 1, 2: 2}) is None  # one token a step: no prompt to tell apart
    assert decode_start({0: 0, 1: 0}) is None and decode_start({}) is None and decode_start(None) is None


def test_a_cell_with_an_undecided_pair_and_no_failure_is_undecided_whatever_its_severity():
    und, fail = TIER_NAMES.index("undecided"), TIER_NAMES.index("fail")
    # Token 0: a pass and an undecided pair whose severity is lower; token 1: a failure beside an undecided pair;
    # token 2: passes only.
    grid = heat_grid(
        _growth(
            [0, 0, 1, 1, 2],
            [0, 0, 0, 0, 0],
            [0.1, 0.01, 0.5, 0.01, 0.001],
            [0.5, 0.1, 50.0, 0.2, 0.1],
            failed=[False, False, True, False, False],
            tier=[0, und, fail, und, 0],
        )
    )
    assert grid.state.tolist() == [[1, 2, 0]]
