"""Mutants of every format's traces through show, validate, compare and pack: no internal error, abort or hang.

The default suite runs a fixed, small budget (the same mutants every time);
the slow tier runs more of them, the C++, C and Rust emitters' traces
included. `benchmarks/fuzz.py` is the long run whose figures docs/robustness.md
records. A failure leaves the mutant under the test's tmp_path/failures:
copy it to tests/fuzz/regressions/.
"""

from __future__ import annotations

import pytest

from tests.fuzz.campaign import MEMORY_BOUND, run_campaign
from tests.fuzz.seeds import make_seeds

DEFAULT_BUDGET = 96  # eight mutants of each seed: about half a minute on two cores


def test_mutants_of_every_format_never_end_in_an_internal_error_an_abort_or_a_hang(seeds, tmp_path):
    result = run_campaign(seeds, DEFAULT_BUDGET, tmp_path, workers=1)
    assert result.mutants == DEFAULT_BUDGET and set(result.by_seed) == {s.name for s in seeds}
    assert not result.failures, result.summary()
    assert result.peak_rss < MEMORY_BOUND


@pytest.mark.slow
def test_two_thousand_mutants_of_every_emitters_traces_find_nothing(tmp_path):
    seeds = make_seeds(tmp_path / "seeds", native=True)
    result = run_campaign(seeds, 2000, tmp_path, workers=2, start=10_000)
    assert not result.failures, result.summary()
