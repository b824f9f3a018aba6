"""The growth table folds each round into one row per token and layer, as a from-scratch reduction would."""

from __future__ import annotations

from typing import Any

import numpy as np

from orchlog.compare.grading.growth import Growth
from orchlog.compare.grading.tiers import TIER_NAMES
from orchlog.read.batch import NONE
from orchlog.strings import Strings


def _reference(rounds: list[dict]) -> dict[int, list[tuple]]:
    """Every pair ever added, reduced per (token, label) in plain Python: the worst pair is the one with the
    highest severity, the latest in execution order of equals (whatever order they were added in)."""
    groups: dict[tuple[int, str], dict] = {}
    pairs = sorted(((int(r["order"][k]), r, k) for r in rounds for k in range(len(r["tokens"]))), key=lambda p: p[0])
    for _, r, k in pairs:
        layer = int(r["layers"][k])
        label = f"layer {layer}" if layer != NONE else r["names"][k]
        sev = -np.inf if np.isnan(r["severity"][k]) else r["severity"][k]
        g = groups.setdefault((int(r["tokens"][k]), label), {"pairs": 0, "failed": 0, "sev": None})
        g["first"] = min(g.get("first", np.inf), int(r["order"][k]))
        g["pairs"] += 1
        g["failed"] += int(r["failed"][k])
        g["max_abs"] = np.fmax(g.get("max_abs", np.nan), r["max_abs"][k])
        g["min_cos"] = np.fmin(g.get("min_cos", np.nan), r["cosine"][k])
        if g["sev"] is None or sev >= g["sev"]:
            g["sev"], g["worst"], g["tier"] = sev, r["names"][k], TIER_NAMES[int(r["tier"][k])]
    out: dict[int, list[tuple]] = {}
    for (tok, label), g in groups.items():
        out.setdefault(tok, []).append(
            (label, g["first"], g["pairs"], g["failed"], g["max_abs"], g["min_cos"], g["worst"], g["tier"])
        )
    return {tok: sorted(rows, key=lambda r: r[1]) for tok, rows in out.items()}


def _round(rng: np.random.Generator, n: int, start: int) -> dict:
    names = [str(rng.choice(["Qcur", "l_out", "result_output", "inp_embd"])) for _ in range(n)]
    return {
        "tokens": rng.integers(-1, 6, n),
        "layers": np.where(rng.random(n) < 0.2, NONE, rng.integers(0, 4, n)),
        "names": names,
        "order": start + rng.permutation(n),
        "failed": rng.random(n) < 0.3,
        "max_abs": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
        "cosine": rng.random(n),
        "severity": np.where(rng.random(n) < 0.1, np.nan, np.round(rng.random(n) * 3, 1)),  # ties on purpose
        "tier": rng.integers(0, len(TIER_NAMES), n),
    }


def _rows(table) -> list[tuple]:
    return [
        (g.label, g.first_order, g.pairs, g.failed, g.max_abs, g.min_cosine, g.worst_checkpoint, g.worst_tier)
        for g in table
    ]


def test_rounds_fold_into_the_rows_a_single_reduction_gives():
    rng = np.random.default_rng(0)
    growth, rounds = Growth(), []
    for k in range(12):
        r = _round(rng, int(rng.integers(1, 80)), 1000 * k)
        rounds.append(r)
        growth.add(
            r["tokens"], r["layers"], Strings.from_values(r["names"]), r["order"], r["order"], r["failed"],
            r["max_abs"], r["cosine"], r["severity"], r["tier"],
        )  # fmt: skip
    want = _reference(rounds)
    assert growth.tokens() == sorted(want)
    for tok, rows in want.items():
        np.testing.assert_equal(_rows(growth.table(tok)), rows)
    assert {t: _rows(rows) for t, rows in growth.tables().items()} == {t: _rows(growth.table(t)) for t in want}


def test_keeping_some_tokens_forgets_the_others_and_goes_on_folding():
    rng = np.random.default_rng(1)
    growth = Growth()
    first, second = _round(rng, 50, 0), _round(rng, 50, 100)
    for r in (first, second):
        growth.add(
            r["tokens"], r["layers"], Strings.from_values(r["names"]), r["order"], r["order"], r["failed"],
            r["max_abs"], r["cosine"], r["severity"], r["tier"],
        )  # fmt: skip
        growth.keep(np.array([0, 2]))
    want = _reference([first, second])
    assert growth.tokens() == [0, 2]
    for tok in (0, 2):
        np.testing.assert_equal(_rows(growth.table(tok)), want[tok])


def test_the_rows_do_not_depend_on_the_order_the_rounds_arrive_in():
    rng = np.random.default_rng(2)
    rounds = [_round(rng, int(rng.integers(1, 60)), 1000 * k) for k in range(6)]
    tables = []
    for arrival in (rounds, rounds[::-1], rounds[2:] + rounds[:2]):
        growth = Growth()
        for r in arrival:
            growth.add(
                r["tokens"], r["layers"], Strings.from_values(r["names"]), r["order"], r["order"], r["failed"],
                r["max_abs"], r["cosine"], r["severity"], r["tier"],
            )  # fmt: skip
        tables.append({t: _rows(growth.table(t)) for t in growth.tokens()})
    assert tables[0] == tables[1] == tables[2]


def test_per_stage_rows_keep_every_checkpoint_of_every_layer_apart():
    rng = np.random.default_rng(11)
    rounds = [_round(rng, 300, 1000 * i) for i in range(4)]
    table = Growth(by_stage=True)
    for r in rounds:
        table.add(
            r["tokens"], r["layers"], Strings.from_values(r["names"]), r["order"], r["order"], r["failed"],
            r["max_abs"], r["cosine"], r["severity"], r["tier"],
        )  # fmt: skip
    for tok in range(-1, 6):
        want: dict[Any, Any] = {}
        for r in rounds:
            for k in np.flatnonzero(r["tokens"] == tok):
                layer = None if r["layers"][k] == NONE else int(r["layers"][k])
                key = (r["names"][k], layer)
                want[key] = np.fmax(want.get(key, np.nan), r["max_abs"][k])
        got = {(g.label, g.layer): g.max_abs for g in table.table(tok)}
        assert got.keys() == want.keys()
        assert all(got[k] == want[k] or (np.isnan(got[k]) and np.isnan(want[k])) for k in got)


def test_a_round_reduces_to_one_row_per_token_and_label_with_the_worst_pair_as_a_loop_picks_it():
    from orchlog.compare.grading.growth import _reduce

    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(1, 400))
        rows = {
            "token": rng.integers(0, rng.integers(1, 20), n),
            "label": rng.integers(-3, rng.integers(1, 6), n),
            "first_order": rng.integers(0, 1000, n),
            "pairs": np.ones(n, dtype=np.int64),
            "failed": rng.integers(0, 2, n),
            "undecided": rng.integers(0, 2, n),
            "max_abs": rng.random(n),
            "min_cosine": rng.random(n),
            "noise_ratio": np.where(rng.random(n) < 0.5, np.nan, rng.random(n)),  # NaN: a pair without noise
            "worst_severity": np.where(rng.random(n) < 0.3, -np.inf, rng.integers(0, 3, n).astype(float)),
            "worst_name": np.arange(n),  # names the row, so the test sees which pair won
            "worst_tier": rng.integers(0, 4, n),
            "worst_order": rng.integers(0, 3, n),  # few values: ties in severity, order and place
            "worst_pos": rng.integers(0, 3, n),
        }
        out = _reduce(rows)
        expected: dict[tuple[int, int], int] = {}
        for i in range(n):  # the worst pair; of equally bad ones the later (order, place), then the later row
            key = (int(rows["token"][i]), int(rows["label"][i]))
            rank = (rows["worst_severity"][i], rows["worst_order"][i], rows["worst_pos"][i])
            j = expected.get(key)
            if j is None or rank >= (rows["worst_severity"][j], rows["worst_order"][j], rows["worst_pos"][j]):
                expected[key] = i
        got = {(int(t), int(lab)): int(w) for t, lab, w in zip(out["token"], out["label"], out["worst_name"])}
        assert got == expected
        for t, lab, ratio in zip(out["token"], out["label"], out["noise_ratio"]):  # the largest, NaN when none
            mine = rows["noise_ratio"][(rows["token"] == t) & (rows["label"] == lab)]
            assert np.array_equal(ratio, np.nanmax(mine) if not np.isnan(mine).all() else np.nan, equal_nan=True)
        for k, (t, lab) in enumerate(zip(out["token"].tolist(), out["label"].tolist())):
            members = (rows["token"] == t) & (rows["label"] == lab)
            assert out["pairs"][k] == members.sum() and out["failed"][k] == rows["failed"][members].sum()
            assert out["first_order"][k] == rows["first_order"][members].min()


def test_dropping_the_tokens_after_one_keeps_its_own_and_every_earlier_row():
    rng = np.random.default_rng(3)
    growth, r = Growth(), _round(rng, 80, 0)
    growth.add(
        r["tokens"], r["layers"], Strings.from_values(r["names"]), r["order"], r["order"], r["failed"],
        r["max_abs"], r["cosine"], r["severity"], r["tier"],
    )  # fmt: skip
    want = _reference([r])
    growth.drop_after(2)
    assert growth.tokens() == [t for t in sorted(want) if t <= 2]
    for tok in growth.tokens():
        np.testing.assert_equal(_rows(growth.table(tok)), want[tok])
