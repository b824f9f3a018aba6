"""Every input that once broke orchlog (tests/fuzz/regressions/) goes through its commands without harm."""

from __future__ import annotations

from pathlib import Path

from tests.fuzz.campaign import run_inputs
from tests.fuzz.mutate import Mutant
from tests.fuzz.seeds import Seed

REGRESSIONS = Path(__file__).with_name("regressions")


def _inputs(seeds) -> list[Mutant]:
    """Each regression with the undamaged trace it came from; one from a native emitter's trace (not made
    in the default suite) is compared with itself."""
    by_name = {s.name: s for s in seeds}
    out = []
    for n, path in enumerate(sorted(p for p in REGRESSIONS.iterdir() if p.name != "README.md")):
        name = path.name.split("--")[0]
        seed = by_name.get(name, Seed(name, path, "file"))
        out.append(Mutant(seed, n, path, seed.path, ("regression",)))
    return out


def test_the_regression_corpus_covers_every_kind_of_failure_it_was_built_from(seeds):
    inputs = _inputs(seeds)
    assert len(inputs) >= 30
    assert {m.seed.kind for m in inputs} >= {"jsonl", "frames", "parquet", "dir"}


def test_every_regression_file_goes_through_every_command_without_harm(seeds, tmp_path):
    result = run_inputs(_inputs(seeds), tmp_path, keep_all=True)
    assert result.mutants >= 30
    assert not result.failures, result.summary()
