"""Seed 004's BOS story end to end: the NumPy engine run once with a BOS before the prompt and once
without, each record carrying its position's token id. compare says the prompts differ at position 0
instead of reporting a divergence, and --token-offset 1 lines the runs up, after which what differs is
real: RoPE turns the same tokens by different positions."""

from __future__ import annotations

import subprocess
import sys

import pytest

from examples.hunt.traces import numpy_trace
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO, Scenario
from orchlog.compare import CompareOptions, compare

BOS = 1  # not among the scenario's ids


@pytest.fixture(scope="module")
def bos_traces(tiny_gguf, tmp_path_factory):
    out = tmp_path_factory.mktemp("bos")
    with_bos = Scenario(prompt=(BOS, *DEFAULT_SCENARIO.prompt), decode=DEFAULT_SCENARIO.decode)
    return numpy_trace(tiny_gguf, out / "with_bos.bin", scenario=with_bos), numpy_trace(tiny_gguf, out / "plain.bin")


def test_a_prepended_bos_is_named_as_the_first_position_where_the_prompts_differ(bos_traces):
    a, b = bos_traces
    proc = subprocess.run([sys.executable, "-m", "orchlog", "compare", str(a), str(b)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"token ids differ at position 0 (a: {BOS}, b: {DEFAULT_SCENARIO.prompt[0]})" in proc.stdout
    assert "FIRST DIVERGENCE" not in proc.stdout


def test_token_offset_lines_the_runs_up_and_what_remains_is_a_real_difference(bos_traces):
    a, b = bos_traces
    report = compare(a, b, CompareOptions(token_offset=1))
    assert report.tokens.mismatch is None and report.tokens.positions == DEFAULT_SCENARIO.n_positions
    # The same token at every aligned position: embedding, norm and projections agree exactly...
    assert report.status == "diverged" and report.diverging_token == 1
    assert (report.first.checkpoint, report.first.layer, report.first.stage) == ("Qcur", 0, "rope")
    # ...until RoPE, which turns them by positions one apart.
    assert {(u.key["token_idx"]) for u in report.unmatched_on("a")} == {0}  # the BOS itself
