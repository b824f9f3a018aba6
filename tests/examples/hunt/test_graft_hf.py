"""HF transformers, through orchlog.torch, grafted from llama.cpp's full trace one stage at a time: on the
tiny model every stage's own error is at most 1e-5."""

from __future__ import annotations

import pytest

from examples.hunt.graft_hf import HF_STAGES, hf_graft_report
from examples.qwen2_tiny.config import TINY
from orchlog.graft_report.local_error import GRAFTED_ONLY, WITHIN
from orchlog.read.batch import NONE
from orchlog.report import render_text

pytestmark = pytest.mark.slow  # builds llama.cpp (cached), imports torch

OWN_ERROR_BOUND = 1e-5
OUTSIDE_BLOCKS = ("embd", "result_norm", "result_output")


def test_every_stage_of_hf_makes_at_most_1e_5_of_its_own_against_llama_cpp(hunt_dir, run_tokens_program):
    report = hf_graft_report(hunt_dir, run_tokens_program)
    assert report.status == "ok", render_text(report)
    assert all(c.grafted for c in report.coverage)
    assert not [w for w in report.warnings() if "not proven equal" in w]  # every graft took
    rows = {(r.stage[0], r.stage[1]): r for r in report.rows}
    expected = {(NONE, s) for s in OUTSIDE_BLOCKS} | {
        (layer, s) for layer in range(TINY.n_layer) for s in HF_STAGES if s not in OUTSIDE_BLOCKS
    }
    assert set(rows) == expected
    # The embedding is the first stage of a token: no graft point before it, its end-to-end error its own.
    embd = rows.pop((NONE, "embd"))
    assert embd.end_to_end is not None
    assert embd.verdict == GRAFTED_ONLY and embd.end_to_end.max_abs <= OWN_ERROR_BOUND
    for row in rows.values():
        assert row.local is not None
        assert row.verdict == WITHIN and row.local.hops == 0, row
        assert row.local.measure.max_abs <= OWN_ERROR_BOUND, row
