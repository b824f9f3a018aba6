"""Windows: tensors of the same rank and different extents (a padded KV cache) are compared on their
common leading window along every axis, said so in every report format, and graded normally only when
asked (--window, window = true in a tolerance rule)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from orchlog.compare.pairing.window import Window
from orchlog.report import render_html, render_markdown, render_text
from tests.tracegen import record, write_frames, write_jsonl

PHRASE = "compared on window [4,5] of [4,256] / [4,5]"


def _padded(rows: np.ndarray, width: int = 256) -> np.ndarray:
    out = np.zeros((rows.shape[0], width), np.float32)
    out[:, : rows.shape[1]] = rows
    return out


def _traces(tmp_path, change=None, write=write_frames, values=10) -> tuple[Path, Path]:
    rows = np.random.default_rng(3).random((4, 5)).astype(np.float32)
    ours = rows.copy()
    if change:
        ours[change] += 0.5
    a = write(tmp_path / "a", [record("kq_soft_max", _padded(rows), token_idx=4, layer=0, seq=0, values=values)])
    b = write(tmp_path / "b", [record("kq_soft_max", ours, token_idx=4, layer=0, seq=0, values=values)])
    return a, b


def test_the_window_is_the_common_leading_extent_of_every_axis():
    w = Window.of((4, 256), (4, 5), True)
    assert w is not None
    assert w.extent == (4, 5) and w.describe() == PHRASE
    assert Window.of((4, 5), (4, 5), True) is None and Window.of((20,), (4, 5), True) is None
    x = np.arange(4 * 256).reshape(4, 256)
    assert w.cut(x.reshape(-1), "a").tolist() == x[:, :5].tolist()


def test_without_a_window_a_shape_mismatch_fails_but_the_window_is_what_was_compared(tmp_path):
    report = compare(*_traces(tmp_path))
    assert report.first is not None
    assert report.status == "diverged" and report.first.metrics["max_abs"] == 0  # no flat prefix across heads
    assert "shapes differ" in report.first.reason and PHRASE in render_text(report)


def test_with_a_window_the_pair_is_graded_on_it_and_each_format_says_so(tmp_path):
    a, b = _traces(tmp_path)
    report = compare(a, b, CompareOptions(windows=("kq*",), heatmap=True, detail=True))
    assert report.status == "ok" and report.findings.counts[4] == 0
    assert PHRASE in render_text(report)
    doc = json.loads(json.dumps(report.to_json()))
    assert doc["pairs"][0]["alignment"]["window"] == {"window": [4, 5], "a": [4, 256], "b": [4, 5], "allowed": True}
    failing = compare(*_traces(tmp_path, change=(3, 4)), CompareOptions(windows=("kq*",), heatmap=True))
    assert failing.first is not None
    assert failing.first.metrics["max_abs"] == 0.5
    for text in (render_text(failing), render_markdown(failing), render_html(failing)):
        assert PHRASE in text.replace("\\", ""), text  # Markdown escapes the brackets


def test_a_tolerance_rule_can_allow_the_window(tmp_path):
    rules = tmp_path / "t.toml"
    rules.write_text('[default]\nthreshold = 1e-3\n[[rule]]\nname = "attention"\nmatch = "kq*"\nwindow = true\n')
    assert compare(*_traces(tmp_path), CompareOptions(tolerances=str(rules))).status == "ok"


def test_summaries_compare_the_window_elements_both_sides_leading_values_hold(tmp_path):
    # 10 leading values: row 0 of the padded side; rows 0 and 1 of the small side: row 0's 5 cells meet.
    a, b = _traces(tmp_path, write=write_jsonl)
    report = compare(a, b, CompareOptions(windows=("kq*",), detail=True))
    pair = report.findings.kept_pairs()[0]
    # 5 of the window's cells are held by both sides: equal, they prove no pass over the rest of it.
    assert pair.basis == "bounds" and pair.metrics["n"] == 5 and report.status == "undecided"
    a, b = _traces(tmp_path, change=(0, 2), write=write_jsonl)
    first = compare(a, b, CompareOptions(windows=("kq*",))).first
    assert first is not None and first.metrics["max_abs"] == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(20))
def test_random_extents_agree_on_their_window_and_a_change_inside_it_is_found(tmp_path, seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    small = tuple(int(d) for d in rng.integers(1, 6, size=rank))
    large = tuple(d + int(rng.integers(0, 4)) for d in small)
    x = rng.standard_normal(large).astype(np.float32)
    window = tuple(slice(0, d) for d in small)
    y = x[window].copy()
    a = write_frames(tmp_path / "a", [record("kq", x, token_idx=0, seq=0)])
    b = write_frames(tmp_path / "b", [record("kq", y, token_idx=0, seq=0)])
    assert compare(a, b, CompareOptions(windows=("kq",))).status == "ok"
    where = tuple(int(rng.integers(0, d)) for d in small)
    y[where] += 1.0
    b = write_frames(tmp_path / "b", [record("kq", y, token_idx=0, seq=0)])
    report = compare(a, b, CompareOptions(windows=("kq",)))
    assert report.first is not None
    assert report.status == "diverged" and report.first.metrics["max_abs"] == pytest.approx(1.0)
