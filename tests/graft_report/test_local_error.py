"""Which pairs of a grafted run measure a stage's own error, and what each stage's row then says."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.compare.grading.tiers import FAIL, TIER_NAMES, UNDECIDED_TIER
from orchlog.graft_report.local_error import (
    GRAFTED_ONLY,
    INHERITED,
    INTRODUCED,
    INTRODUCED_SINCE,
    MISSING,
    NO_GRAFT_BEFORE,
    UNDECIDED,
    WITHIN,
    hops_since_graft,
    largest_local,
    per_layer,
    stage_rows,
)
from orchlog.graft_report.pairs import LocalPairs
from orchlog.read.batch import NONE
from orchlog.tolerances.rules import load_tolerances

STAGES = ("attn_norm", "attn_out", "ffn_out", "l_out")
THRESHOLD = 1e-3
CLOSE = TIER_NAMES.index("close")


def _pairs(rows: list[dict], path: str = "run") -> LocalPairs:
    """LocalPairs from dicts with checkpoint, layer, token, grafted and the max |difference| (graded as the
    tolerances below grade max_abs: fail at THRESHOLD and beyond; undecided when `undecided` is set)."""
    cols: dict[str, list] = {k: [] for k in ("checkpoint", "stage", "layer", "token_idx", "step", "order")}
    for k in ("ref_order", "grafted", "tier", "rule", "severity", "value", "lo", "hi", "max_abs"):
        cols[k] = []
    for i, r in enumerate(rows):
        err = r["err"]
        cols["checkpoint"].append(r["checkpoint"])
        cols["stage"].append(None)
        cols["layer"].append(r.get("layer", NONE))
        cols["token_idx"].append(r.get("token", 0))
        cols["step"].append(0)
        cols["order"].append(i)
        cols["ref_order"].append(i)
        cols["grafted"].append(int(r.get("grafted", 0)))
        tier = UNDECIDED_TIER if r.get("undecided") else FAIL if err >= THRESHOLD else CLOSE
        cols["tier"].append(tier)
        cols["rule"].append(0)
        cols["severity"].append(err / THRESHOLD)
        cols["value"].append(err)
        cols["lo"].append(err)
        cols["hi"].append(err * 10 if r.get("undecided") else err)
        cols["max_abs"].append(err)
    columns = {
        k: np.array(v, dtype=object)
        if k in ("checkpoint", "stage")
        else np.array(v, dtype=np.float64)
        if k in ("severity", "value", "lo", "hi", "max_abs")
        else np.array(v, dtype=np.int64)
        for k, v in cols.items()
    }
    return LocalPairs(path, columns, 0, 0, 0)


@pytest.fixture
def tolerances():
    return load_tolerances("default").overridden("max_abs", THRESHOLD, None)


def _model_run(layers: int, tokens: int, grafted: set[str], error: dict[tuple[int, str], float]) -> list[dict]:
    """A run of `layers` x STAGES per token, token-major; a stage's own error adds to what it inherits unless
    its input was grafted (the stage right before it in the run)."""
    rows = []
    for token in range(tokens):
        carried = 0.0
        for layer in range(layers):
            for name in STAGES:
                carried += error.get((layer, name), 0.0)
                is_grafted = name in grafted
                rows.append(
                    {
                        "checkpoint": name,
                        "layer": layer,
                        "token": token,
                        "grafted": is_grafted,
                        "err": 0.0 if is_grafted else carried,
                    }
                )
                if is_grafted:
                    carried = 0.0
    return rows


def test_hops_count_the_records_of_the_same_token_since_its_last_graft_point():
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(1, 60))
        tokens = rng.integers(0, 4, n)
        grafted = rng.random(n) < 0.3
        order = rng.permutation(n)
        run = _pairs(
            [{"checkpoint": "x", "token": int(t), "grafted": bool(g), "err": 0.0} for t, g in zip(tokens, grafted)]
        )
        run.columns["order"] = order.astype(np.int64)
        hops, since = hops_since_graft(run.columns)
        for i in range(n):
            before = [j for j in range(n) if tokens[j] == tokens[i] and order[j] < order[i]]
            grafts = [j for j in before if grafted[j]]
            if grafted[i] or not grafts:
                assert hops[i] == -1 and since[i] == -1
            else:
                last = max(grafts, key=lambda j: order[j])
                assert since[i] == last
                assert hops[i] == sum(1 for j in before if order[j] > order[last])


def test_a_bug_in_one_stage_is_introduced_there_and_inherited_downstream(tolerances):
    bug = {(1, "attn_out"): 5e-3}
    plain = _pairs(_model_run(3, 2, set(), bug))
    grafted = _pairs(_model_run(3, 2, {"attn_norm", "ffn_out"}, bug))
    rows, _ = stage_rows([grafted], plain, tolerances)
    by = {(r.stage[0], r.stage[1]): r for r in rows}
    assert by[(1, "attn_out")].verdict == INTRODUCED
    introduced = by[(1, "attn_out")].local
    assert introduced is not None and introduced.hops == 0 and introduced.since == (1, "attn_norm", "")
    assert by[(2, "attn_out")].verdict == INHERITED  # plain carries layer 1's error, grafted does not
    assert by[(1, "attn_norm")].verdict == GRAFTED_ONLY
    assert by[(0, "attn_norm")].verdict == GRAFTED_ONLY
    largest = largest_local(rows)
    assert largest is not None and largest.stage == (1, "attn_out", "")


def test_a_record_several_after_its_graft_point_is_introduced_since_that_point(tolerances):
    bug = {(0, "attn_out"): 5e-3}
    rows, _ = stage_rows([_pairs(_model_run(2, 1, {"attn_norm"}, bug))], None, tolerances)
    by = {(r.stage[0], r.stage[1]): r for r in rows}
    assert by[(0, "ffn_out")].verdict == INTRODUCED_SINCE
    since = by[(0, "ffn_out")].local
    assert since is not None and since.hops == 1


def test_records_before_any_graft_point_are_not_local_measurements(tolerances):
    rows, cover = stage_rows([_pairs(_model_run(2, 1, {"l_out"}, {}))], None, tolerances)
    by = {(r.stage[0], r.stage[1]): r for r in rows}
    assert by[(0, "attn_norm")].verdict == NO_GRAFT_BEFORE
    assert by[(1, "attn_norm")].verdict == WITHIN
    assert cover[0].grafted == 2 and cover[0].measured == 3


def test_an_undecided_local_error_is_never_within_tolerance(tolerances):
    run = _model_run(1, 1, {"attn_norm"}, {})
    run[1]["undecided"] = True
    rows, _ = stage_rows([_pairs(run)], None, tolerances)
    assert [r.verdict for r in rows if r.stage[1] == "attn_out"] == [UNDECIDED]


def test_a_stage_only_in_the_plain_run_is_missing(tolerances):
    plain = _pairs([{"checkpoint": "embd", "err": 0.0}, {"checkpoint": "x", "layer": 0, "err": 0.0}])
    grafted = _pairs([{"checkpoint": "x", "layer": 0, "err": 0.0, "grafted": True}])
    rows, _ = stage_rows([grafted], plain, tolerances)
    assert {r.stage[1]: r.verdict for r in rows} == {"embd": MISSING, "x": GRAFTED_ONLY}


def test_of_several_runs_each_stage_is_measured_where_it_sits_closest_to_a_graft_point(tolerances):
    bug = {(0, "ffn_out"): 5e-3}
    early = _pairs(_model_run(1, 1, {"attn_norm"}, bug), "early")  # ffn_out two records after the graft
    late = _pairs(_model_run(1, 1, {"attn_out"}, bug), "late")  # ffn_out right after it
    rows, _ = stage_rows([early, late], None, tolerances)
    ffn = next(r for r in rows if r.stage[1] == "ffn_out")
    assert ffn.local is not None
    assert ffn.local.run == 1 and ffn.local.hops == 0 and ffn.verdict == INTRODUCED


def test_an_error_at_every_layer_is_attributed_to_every_layer_equally(tolerances):
    layers = 4
    bug = {(layer, "ffn_out"): 2e-3 for layer in range(layers)}
    plain = _pairs(_model_run(layers, 2, set(), bug))
    grafted = _pairs(_model_run(layers, 2, {"attn_out", "l_out"}, bug))
    rows, _ = stage_rows([grafted], plain, tolerances)
    worst = per_layer(rows)
    assert [r.stage[0] for r in worst] == list(range(layers))
    assert {r.stage[1] for r in worst} == {"ffn_out"}
    assert np.allclose([r.local.measure.max_abs for r in worst if r.local and r.local.measure], 2e-3)
    ends = [r.end_to_end.max_abs for r in worst if r.end_to_end]
    assert len(ends) == layers
    assert ends == sorted(ends) and ends[-1] == pytest.approx(layers * 2e-3)  # accumulates in the plain run
