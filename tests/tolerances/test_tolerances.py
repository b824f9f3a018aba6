"""Tolerance files: the shipped split, rule order, overrides, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.errors import OrchlogError
from orchlog.tolerances.rules import load_tolerances, shipped_tolerances


def test_shipped_defaults_are_relative_loose_for_logits_strict_for_embeddings_and_between_for_the_rest():
    tol = load_tolerances()
    assert {r.metric for r in tol.all_rules} == {"rel_l2"}
    assert tol.rule_for("logits").threshold == 1e-2
    assert tol.rule_for("result_output").threshold == 1e-2
    assert tol.rule_for("token_embd").threshold == 1e-6 and tol.rule_for("embedding").threshold == 1e-6
    assert tol.rule_for("blk.3.attn_norm").threshold == 1e-3
    assert tol.rule_for("blk.3.attn_norm").bounds == (1e-7, 1e-5, 1e-3, 1e-2)
    assert {"default", "absolute"} <= set(shipped_tolerances())


def test_the_absolute_file_keeps_the_former_defaults():
    tol = load_tolerances("absolute")
    assert tol.rule_for("logits").threshold == 1.0 and tol.rule_for("token_embd").threshold == 1e-3
    assert tol.rule_for("blk.3.attn_norm").metric == "max_abs" and tol.rule_for("blk.3.attn_norm").threshold == 1e-2


def test_the_first_matching_rule_wins(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(
        "[default]\nthreshold = 0.5\n"
        '[[rule]]\nname = "q"\nmatch = "Q*"\nmetric = "cosine"\nthreshold = 0.99\n'
        '[[rule]]\nname = "all"\nmatch = ["*"]\nthreshold = 2.0\ncos_tol = 0.9\ntiers = [0, 0, 0, 1]\n'
    )
    tol = load_tolerances(str(path))
    assert tol.rule_for("Qcur").name == "q" and tol.rule_for("Qcur").higher_is_better
    assert tol.rule_for("Kcur").name == "all" and tol.rule_for("Kcur").cos_tol == 0.9
    assert tol.rule_for("Kcur").bounds == (0.0, 0.0, 0.0, 1.0)


def test_command_line_overrides_apply_to_every_rule():
    tol = load_tolerances().overridden(metric="p99_abs", threshold=0.25, cos_tol=0.999)
    assert {(r.metric, r.threshold, r.cos_tol) for r in tol.all_rules} == {("p99_abs", 0.25, 0.999)}
    with pytest.raises(OrchlogError, match="--metric"):
        load_tolerances().overridden(metric="vibes")


@pytest.mark.parametrize(
    "text, message",
    [
        ("[[rule]]\nname = 'x'\n", "needs match"),
        ("[[rule]]\nmatch = '*'\nmetric = 'vibes'\n", "not one of"),
        ("[[rule]]\nmatch = '*'\ntiers = [3, 2, 1, 0]\n", "4 increasing"),
        ("[[rule]]\nmatch = '*'\nthreshold = 'big'\n", "must be numbers"),
        ("[[rule]]\nmatch = '*'\ncolour = 1\n", "unknown key"),
        ("threshold = 1\n", "unknown key"),
        ("[[rule]]\nmatch = '*'\nstage = 3\n", "stage must be a string"),
        ("[[rule]]\nmatch = '*'\nlayers = []\n", "layers must be a list"),
        ("[[rule]]\nmatch = '*'\nlayers = [0.1, -1]\n", "layers must be a list"),
        ("[[rule]]\nmatch = '*'\ngrowth = 0\n", "growth must be a number > 0"),
        ("[[rule]]\nmatch = '*'\nnoise_floor = 'x'\n", "must be numbers"),
        ("calibration = 3\n", "must be a table"),
    ],
)
def test_bad_tolerance_files_are_clear_errors(tmp_path, text, message):
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(OrchlogError, match=message):
        load_tolerances(str(path))


def test_an_unknown_tolerance_name_is_an_error():
    with pytest.raises(OrchlogError, match="--tolerances nope: no such file, and nothing shipped by that name"):
        load_tolerances("nope")


def test_a_rule_may_name_a_stage_and_a_threshold_per_layer(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(
        "[[rule]]\nmatch = 'Qcur'\nstage = 'rope'\nmetric = 'rel_l2'\nlayers = [0.1, 0.2]\ngrowth = 2.0\n"
        "threshold = 0.5\n[[rule]]\nmatch = 'Qcur'\nstage = ''\nthreshold = 7\n"
    )
    tol = load_tolerances(str(path))
    assert tol.rule_for("Qcur", "rope").layers == (0.1, 0.2)
    assert tol.rule_for("Qcur", None).threshold == 7 and tol.rule_for("Qcur", "add") is tol.default
    assert tol.rule_for("Qcur", "rope").threshold_at(np.array([0, 1, 3, -1])).tolist() == [0.1, 0.2, 0.8, 0.5]
