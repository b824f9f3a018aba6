"""No damaged graft reference reaches the engine's tensor, in C++ (under ASan and UBSan), Rust or Python.

One corpus (tests/fuzz/graft_corpus.py) for all three: each emitter grafts
the same plan from every mutant and every forged reference, and each call
must either leave its tensor alone or write exactly what the sound reference
gives. The C++ harness is built with AddressSanitizer and
UndefinedBehaviorSanitizer and stops at their first report; the Rust one is a
debug build (integer overflow and slice bounds checked) whose logger would
turn itself off after a panic, which the harness reports. The default tier
runs 240 mutants and the forged files (seconds once the harnesses are built);
the slow tier 3,000 more.
"""

from __future__ import annotations

import pytest

from tests.cargo import rust_example
from tests.fuzz import graft_corpus
from tests.native import build

SANITIZE = ("-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer")
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS": "print_stacktrace=1"}
DEFAULT_MUTANTS = 240


def _harnesses() -> dict[str, tuple[list[str], dict]]:
    cpp = build.program("graft_mutants.cpp", *SANITIZE)
    return {
        "cpp": ([str(cpp)], SANITIZER_ENV),
        "rust": ([str(rust_example("graft_mutants"))], {}),
        "python": (graft_corpus.python_harness(), {}),
    }


def _campaign(tmp_path, count: int, start: int) -> dict[str, list[str]]:
    reference = tmp_path / "reference.bin"
    plan = graft_corpus.write_reference(reference)
    mutants = graft_corpus.make_mutants(reference, count, tmp_path, start=start)
    problems: dict[str, list[str]] = {}
    for language, (command, env) in _harnesses().items():
        (tmp_path / language).mkdir()
        lines, stderr = graft_corpus.run_harness(
            command, plan, [reference] + [p for p, _ in mutants], tmp_path / language, env
        )
        assert "runtime error" not in stderr and "Sanitizer" not in stderr, stderr[-3000:]
        assert "panicked" not in stderr, stderr[-3000:]
        problems[language] = graft_corpus.check(plan, lines[0], lines[1:], mutants)
        # The corpus is not vacuous: some mutants leave calls grafted, most refuse some.
        flags = [line.split("\t")[0] for line in lines[1:] if line != "off"]
        assert any("1" in f for f in flags) and any("0" in f for f in flags)
    return problems


def test_no_damaged_or_forged_reference_reaches_the_tensor_in_any_emitter(tmp_path):
    problems = _campaign(tmp_path, DEFAULT_MUTANTS, start=0)
    assert problems == {"cpp": [], "rust": [], "python": []}


@pytest.mark.parametrize("language", ["cpp", "rust", "python"])
def test_each_forged_reference_is_refused_for_its_own_reason_not_its_checksum(language, tmp_path):
    reference = tmp_path / "reference.bin"
    plan = graft_corpus.write_reference(reference)
    command, env = _harnesses()[language]
    for name, reason, frames in graft_corpus.forged(graft_corpus.frames(reference.read_bytes())):
        path = tmp_path / f"{name}.bin"
        path.write_bytes(b"".join(frames))
        work = tmp_path / name
        work.mkdir()
        _, stderr = graft_corpus.run_harness(command, plan, [path], work, env)
        assert reason in stderr, (name, stderr)
        assert "checksum (CRC-32C)" not in stderr, (name, stderr)


@pytest.mark.slow
def test_three_thousand_more_mutants_find_nothing(tmp_path):
    problems = _campaign(tmp_path, 3000, start=100_000)
    assert problems == {"cpp": [], "rust": [], "python": []}
