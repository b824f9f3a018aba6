"""The llama.cpp driver ships with the package: orchlog's headers are found, and a llama.cpp install is
recognised (or refused with what to do)."""

from __future__ import annotations

import pytest

from orchlog.llama.build import BuildError
from orchlog.llama.driver import DRIVER_DIR, orchlog_include_dir, user_llama_cpp


def test_the_driver_source_and_its_build_file_are_in_the_package():
    assert (DRIVER_DIR / "run_tokens.cpp").is_file() and (DRIVER_DIR / "CMakeLists.txt").is_file()
    assert DRIVER_DIR.parent.name == "orchlog"


def test_the_cpp_headers_are_found_beside_the_package_or_in_the_checkout():
    assert (orchlog_include_dir() / "orchlog" / "ggml.hpp").is_file()


def test_a_directory_that_is_no_install_prefix_is_refused_with_what_to_run(tmp_path):
    (tmp_path / "include").mkdir()
    with pytest.raises(BuildError, match=r"not a llama.cpp install prefix .*cmake --install build --prefix"):
        user_llama_cpp(tmp_path)
    with pytest.raises(BuildError, match="no such directory"):
        user_llama_cpp(tmp_path / "absent")


def test_an_install_prefix_is_taken_as_the_users_own(tmp_path):
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "llama.h").write_text("")
    (tmp_path / "lib" / "cmake" / "llama").mkdir(parents=True)
    (tmp_path / "lib" / "cmake" / "llama" / "llama-config.cmake").write_text("")
    llama = user_llama_cpp(tmp_path)
    assert llama.prefix == tmp_path.resolve() and llama.origin == f"user {tmp_path.resolve()}"
