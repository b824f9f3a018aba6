"""graft_report on real traces: local errors beside end-to-end ones, the largest named, every format."""

from __future__ import annotations

import json

import numpy as np
import pytest

from orchlog.compare import CompareOptions
from orchlog.graft_report.result import graft_report
from orchlog.report import render_html, render_markdown, render_text
from tests.graft_report.grafted_runs import STAGES, write_run

OPTIONS = CompareOptions(threshold=1e-3, metric="max_abs")


@pytest.fixture
def one_layer_bug(tmp_path):
    bug = {(1, "attn_out"): 5e-3}
    return (
        write_run(tmp_path / "ref.bin", 3, 2),
        write_run(tmp_path / "grafted.bin", 3, 2, bug, {"attn_norm", "ffn_out"}),
        write_run(tmp_path / "plain.bin", 3, 2, bug),
    )


def test_a_bug_in_one_stage_is_named_and_what_follows_it_is_inherited(one_layer_bug):
    ref, grafted, plain = one_layer_bug
    report = graft_report(ref, [grafted], plain, OPTIONS)
    assert report.status == "diverged" and report.exit_code == 1
    assert report.largest is not None
    assert report.largest.stage == (1, "attn_out", "")
    assert report.largest.local is not None
    assert report.largest.local.measure.max_abs == pytest.approx(5e-3, rel=1e-3)
    verdicts = {(r.stage[0], r.stage[1]): r.verdict for r in report.rows}
    assert verdicts[(1, "attn_out")] == "introduced"
    assert verdicts[(2, "attn_out")] == "inherited"
    assert verdicts[(0, "ffn_out")] == "grafted"
    assert "largest local error: attn_out @ layer 1" in render_text(report)


def test_grafted_records_equal_the_reference_and_raise_no_warning(one_layer_bug):
    report = graft_report(one_layer_bug[0], [one_layer_bug[1]], one_layer_bug[2], OPTIONS)
    grafted = [r.grafted for r in report.rows if r.grafted is not None]
    assert grafted and all(m.max_abs == 0 for m in grafted)
    assert report.warnings() == []


def test_every_format_carries_the_table(one_layer_bug):
    report = graft_report(one_layer_bug[0], [one_layer_bug[1]], one_layer_bug[2], OPTIONS)
    doc = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert doc["report"] == "orchlog-graft/1" and doc["status"] == "diverged"
    assert doc["largest_local"]["checkpoint"] == "attn_out" and doc["largest_local"]["layer"] == 1
    row = next(s for s in doc["stages"] if s["checkpoint"] == "attn_out" and s["layer"] == 1)
    assert row["local"]["hops"] == 0 and row["local"]["since"] == {"checkpoint": "attn_norm", "layer": 1, "stage": None}
    assert row["end_to_end"]["tier"] == "fail" and row["verdict"] == "introduced"
    md, html = render_markdown(report), render_html(report)
    assert "| attn_out @ layer 1 |" in md
    assert "<td>attn_out @ layer 1</td>" in html


def test_a_run_without_grafted_records_measures_nothing_local(tmp_path):
    ref = write_run(tmp_path / "ref.bin", 1, 1)
    plain = write_run(tmp_path / "plain.bin", 1, 1, {})
    report = graft_report(ref, [plain], None, OPTIONS)
    assert report.status == "no_graft" and not report and report.largest is None


def test_a_clean_engine_is_within_tolerance_everywhere_it_is_measured(tmp_path):
    ref = write_run(tmp_path / "ref.bin", 2, 2)
    grafted = write_run(tmp_path / "g.bin", 2, 2, {}, {"l_out"})
    report = graft_report(ref, [grafted], None, OPTIONS)
    assert report.status == "ok" and report.exit_code == 0
    assert {r.verdict for r in report.rows} == {"within", "grafted", "no_graft_before"}


def test_on_random_runs_a_stage_right_after_a_graft_point_shows_exactly_its_own_error(tmp_path):
    rng = np.random.default_rng(11)
    ref = write_run(tmp_path / "ref.bin", 3, 2)
    for case in range(8):
        errors = {(layer, s): float(rng.choice([0.0, 2e-4, 4e-3])) for layer in range(3) for s in STAGES}
        grafted = {s for s in STAGES if rng.random() < 0.5} or {"l_out"}
        run = write_run(tmp_path / f"g{case}.bin", 3, 2, errors, grafted)
        report = graft_report(ref, [run], None, OPTIONS)
        for row in report.rows:
            if row.local is not None and row.local.hops == 0:
                own = errors[(row.stage[0], row.stage[1])]
                assert row.local.measure.max_abs == pytest.approx(own, abs=1e-6)
                assert row.verdict == ("introduced" if own >= 1e-3 else "within")
