"""Mutants of every weight format through `orchlog weights` (text, Markdown and JSON, both ways against the
undamaged file): no internal error, abort or hang, bounded memory, and no name reaching the output as an
escape sequence. The default suite runs a fixed, small budget; the slow tier more."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.campaign import MEMORY_BOUND, run_campaign, run_inputs
from tests.fuzz.mutate import Mutant
from tests.fuzz.weight_seeds import make_weight_seeds

REGRESSIONS = Path(__file__).with_name("weight_regressions")

DEFAULT_BUDGET = 48  # twelve mutants of each seed: a few seconds


@pytest.fixture(scope="module")
def weight_seeds(tmp_path_factory):
    return make_weight_seeds(tmp_path_factory.mktemp("weight-seeds"))


def test_mutant_weight_files_never_end_in_an_internal_error_an_abort_or_a_hang(weight_seeds, tmp_path):
    result = run_campaign(weight_seeds, DEFAULT_BUDGET, tmp_path, workers=1, timeout=60)
    assert result.mutants == DEFAULT_BUDGET and set(result.by_seed) == {s.name for s in weight_seeds}
    assert not result.failures, result.summary()
    assert result.peak_rss < MEMORY_BOUND


@pytest.mark.slow
def test_two_thousand_mutant_weight_files_find_nothing(weight_seeds, tmp_path):
    result = run_campaign(weight_seeds, 2000, tmp_path, workers=2, start=10_000, timeout=60)
    assert not result.failures, result.summary()


def test_every_weight_file_that_once_broke_orchlog_weights_goes_through_it_without_harm(weight_seeds, tmp_path):
    """tests/fuzz/weight_regressions/SEED--CAUSE-N: what the campaign found, one file per cause, each compared
    with the undamaged seed it was made from."""
    by_name = {s.name: s for s in weight_seeds}
    files = sorted(REGRESSIONS.iterdir())
    # Each file three times: the job's number turns the report format (text, Markdown, JSON).
    inputs = [Mutant(by_name[p.name.split("--")[0]], 3 * n + k, p, by_name[p.name.split("--")[0]].path, ("regression",))
              for n, p in enumerate(files) for k in range(3)]  # fmt: skip
    assert len(files) >= 4
    result = run_inputs(inputs, tmp_path, keep_all=True)
    assert not result.failures, result.summary()
