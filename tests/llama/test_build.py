"""The cached llama.cpp build: where it lives, what it holds, and that a
second call costs nothing."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from orchlog.llama import build
from orchlog.llama.build import CMAKE_FLAGS, LLAMA_CPP_PYTHON_VERSION, build_key, cache_root, ensure_llama_cpp


def test_the_cache_root_follows_orchlog_cache_dir_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("ORCHLOG_CACHE_DIR", str(tmp_path / "explicit"))
    assert cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("ORCHLOG_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "orchlog"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "orchlog"


def test_the_build_key_changes_with_the_version_and_with_any_flag():
    assert build_key().startswith(f"{LLAMA_CPP_PYTHON_VERSION}-")
    assert build_key("0.0.1") != build_key()
    assert build_key(flags=CMAKE_FLAGS + ("-DGGML_AVX512=ON",)) != build_key()


@pytest.mark.slow
def test_the_install_prefix_holds_the_headers_libraries_and_cmake_package():
    llama = ensure_llama_cpp(quiet=True)
    assert (llama.prefix / "include" / "llama.h").is_file()
    assert (llama.prefix / "include" / "ggml-backend.h").is_file()
    assert (llama.prefix / "lib" / "cmake" / "llama" / "llama-config.cmake").is_file()
    assert any((llama.prefix / "lib").glob("libllama.so*"))
    assert (llama.version, llama.commit, llama.flags) == (LLAMA_CPP_PYTHON_VERSION, build.LLAMA_CPP_COMMIT, CMAKE_FLAGS)


@pytest.mark.slow
def test_a_finished_build_is_returned_at_once_and_quietly_when_piped(repo_root):
    prefix = ensure_llama_cpp(quiet=True).prefix
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "orchlog.llama.build"], capture_output=True, text=True, cwd=repo_root)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 10
    assert proc.stdout.strip() == str(prefix)
    assert proc.stderr == ""


def test_progress_is_read_from_ninja_and_make_lines_and_nothing_else():
    assert build._build_progress("[12/83] Building C object ggml/src/ggml.c.o\n") == (12, 83)
    assert build._build_progress("[ 42%] Building CXX object src/llama.cpp.o\n") == (42, 100)
    assert build._build_progress("-- Configuring done\n") is None
