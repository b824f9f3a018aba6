"""Run-directory patterns: values to paths, paths to values, and where each pair's metrics file goes."""

from __future__ import annotations

import pytest

from orchlog.errors import OrchlogError
from orchlog.guardrail.layout import DEFAULT_RUN_DIRS, RunPattern


def test_the_seed_layout_names_its_axes_and_paths():
    p = RunPattern(DEFAULT_RUN_DIRS)
    assert p.axes == ("kv_aligned", "seed")
    assert p.path({"kv_aligned": "1", "seed": "2"}) == "runs/kv_aligned_1/seed_2"


def test_metrics_files_follow_the_seed_layout():
    assert (
        RunPattern(DEFAULT_RUN_DIRS).metrics_path({"kv_aligned": "0", "seed": "2"})
        == "metrics/kv_aligned_0/seed_2_metrics.json"
    )
    ab = RunPattern("ab/{dtype}-{batch}")
    assert ab.metrics_path({"dtype": "f32", "batch": "8"}) == "metrics/ab/f32-8_metrics.json"


def test_discovery_finds_the_runs_and_lists_directories_that_do_not_fit(tmp_path):
    for rel in (
        "runs/kv_aligned_0/seed_0",
        "runs/kv_aligned_1/seed_10",
        "runs/kv_aligned_1/notes",
        "runs/old",
        "runs/.cache/x",
        "elsewhere/kv_aligned_1/seed_0",
    ):
        (tmp_path / rel).mkdir(parents=True)
    runs, ignored = RunPattern(DEFAULT_RUN_DIRS).discover(tmp_path)
    assert [(r.values, r.path) for r in runs] == [
        ({"kv_aligned": "0", "seed": "0"}, "runs/kv_aligned_0/seed_0"),
        ({"kv_aligned": "1", "seed": "10"}, "runs/kv_aligned_1/seed_10"),
    ]
    assert ignored == ["runs/old", "runs/kv_aligned_1/notes"]


def test_the_metrics_an_earlier_run_wrote_are_not_taken_for_runs(tmp_path):
    for rel in ("b1", "b8", "metrics/b1"):
        (tmp_path / rel).mkdir(parents=True)
    runs, ignored = RunPattern("b{batch}").discover(tmp_path)
    assert [r.path for r in runs] == ["b1", "b8"] and ignored == []


def test_two_axes_in_one_directory_name_are_told_apart(tmp_path):
    (tmp_path / "b8_s3").mkdir()
    (runs, _) = RunPattern("b{batch}_s{seed}").discover(tmp_path)
    assert runs[0].values == {"batch": "8", "seed": "3"} and runs[0].label() == "batch=8 seed=3"


@pytest.mark.parametrize(
    "text, message",
    [
        ("/abs/{seed}", "relative path"),
        ("runs/../{seed}", "relative path"),
        ("runs/{seed}/{seed}", "more than once"),
        ("runs/{two words}", "not an axis name"),
    ],
)
def test_bad_patterns_are_refused(text, message):
    with pytest.raises(OrchlogError, match=message):
        RunPattern(text)
