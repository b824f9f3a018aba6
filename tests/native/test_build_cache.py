"""The test programs' build cache (tests/native/build.py): a build is kept only once its output is accepted,
a kept one is reused while its inputs stay the same, and a changed input builds afresh."""

from __future__ import annotations

import subprocess

import pytest

from tests.native import build


@pytest.fixture
def cxx() -> str:
    if build.CXX is None:
        pytest.skip("no C++ compiler on PATH")
    return build.CXX


@pytest.fixture
def source(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "CACHE", tmp_path / "cache")
    path = tmp_path / "build_cache_probe.cpp"
    path.write_text('#include <cstdio>\nint main() { std::puts("built"); }\n')
    return path


def _refuse(done: subprocess.CompletedProcess[str]) -> None:
    raise AssertionError("refused")


def test_a_refused_build_is_not_kept_and_an_accepted_one_is_reused(cxx, source):
    with pytest.raises(AssertionError, match="refused"):
        build._compile(cxx, source, ["-O0"], (), None, accept=_refuse)
    assert not list((build.CACHE / "test-programs").glob("build_cache_probe-*"))

    seen: list[subprocess.CompletedProcess[str]] = []
    first = build._compile(cxx, source, ["-O0"], (), None, accept=seen.append)
    assert len(seen) == 1 and subprocess.run([first], capture_output=True, text=True).stdout == "built\n"
    again = build._compile(cxx, source, ["-O0"], (), None, accept=seen.append)
    assert again == first and len(seen) == 1  # reused: not compiled, so not checked again


def test_a_changed_source_or_flag_builds_afresh(cxx, source):
    first = build._compile(cxx, source, ["-O0"], (), None)
    assert build._compile(cxx, source, ["-O1"], (), None) != first
    source.write_text('#include <cstdio>\nint main() { std::puts("changed"); }\n')
    changed = build._compile(cxx, source, ["-O0"], (), None)
    assert changed != first and subprocess.run([changed], capture_output=True, text=True).stdout == "changed\n"


def test_a_failed_compile_raises_with_the_compilers_message_and_keeps_nothing(cxx, source):
    source.write_text("int main() { return undeclared; }\n")
    with pytest.raises(subprocess.CalledProcessError) as failed:
        build._compile(cxx, source, ["-O0"], (), None)
    assert "undeclared" in failed.value.stderr
    assert not list((build.CACHE / "test-programs").glob("build_cache_probe-*"))
