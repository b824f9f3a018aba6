"""Mutants of other tools' dumps (torch pickles with hostile opcodes and lengths, Polygraphy arrays with
broken base64 and lying .npy headers, safetensors headers that claim too much, damaged text) through
show, validate, compare and pack: no internal error, abort, hang, or memory past the bound, and no pickle
ever executed (a mutant that would run one names `os.system`, which the readers refuse by name)."""

from __future__ import annotations

import pytest

from tests.fuzz.campaign import MEMORY_BOUND, run_campaign
from tests.fuzz.seeds import make_tool_seeds

DEFAULT_BUDGET = 78  # six mutants of each of the 13 seeds: about 15 s on two cores


def test_mutants_of_every_tools_dump_never_end_in_an_internal_error_an_abort_or_a_hang(tmp_path):
    seeds = make_tool_seeds(tmp_path / "seeds")
    result = run_campaign(seeds, DEFAULT_BUDGET, tmp_path, workers=1)
    assert result.mutants == DEFAULT_BUDGET and set(result.by_seed) == {s.name for s in seeds}
    assert not result.failures, result.summary()
    assert result.peak_rss < MEMORY_BOUND


@pytest.mark.slow
def test_two_thousand_mutants_of_the_tools_dumps_find_nothing(tmp_path):
    seeds = make_tool_seeds(tmp_path / "seeds")
    result = run_campaign(seeds, 2000, tmp_path, workers=2, start=20_000)
    assert not result.failures, result.summary()
