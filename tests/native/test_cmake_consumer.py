"""A separate CMake project finds the installed package and links its targets:
find_package(orchlog) + target_link_libraries(app orchlog::orchlog), and
orchlog::orchlog_c for a C program."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from orchlog import open_trace
from tests.native.build import ROOT
from tests.native.host_processes import env

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake on PATH")]

CONSUMER_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(consumer LANGUAGES C CXX)
find_package(orchlog 0.1 CONFIG REQUIRED)
add_executable(app app.cpp)
target_link_libraries(app PRIVATE orchlog::orchlog)
target_compile_definitions(app PRIVATE ORCH_LOGGING)
add_executable(capp capp.c)
target_link_libraries(capp PRIVATE orchlog::orchlog_c)
"""

C_HOST = """\
#include <orchlog/orchlog.h>
int main(void) {
  float x[3] = {1.0f, 2.0f, 3.0f};
  int64_t shape[1] = {3};
  orchlog_key key = {7, 2, ORCHLOG_NONE, "mul_mat"};
  return orchlog_log("from_c", x, "f32", shape, 1, &key) == 1 ? 0 : 1;
}
"""


def _cmake(*args, cwd=None):
    proc = subprocess.run(["cmake", *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_installed_orchlog_is_found_and_linked_by_a_consumer_project(tmp_path):
    build, prefix, consumer = tmp_path / "build", tmp_path / "prefix", tmp_path / "consumer"
    _cmake(
        "-S",
        str(ROOT),
        "-B",
        str(build),
        "-G",
        "Ninja",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DORCHLOG_BUILD_C_LIBRARY=ON",
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
    )
    _cmake("--build", str(build), "-j", "2")
    _cmake("--install", str(build))
    assert (prefix / "include/orchlog/orchlog.hpp").exists() and (prefix / "include/orchlog/orchlog.h").exists()

    consumer.mkdir()
    (consumer / "CMakeLists.txt").write_text(CONSUMER_CMAKE)
    shutil.copy(ROOT / "examples/cpp/quickstart.cpp", consumer / "app.cpp")
    (consumer / "capp.c").write_text(C_HOST)
    _cmake("-S", str(consumer), "-B", str(consumer / "build"), "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}")
    _cmake("--build", str(consumer / "build"), "-j", "2")

    cpp_trace, c_trace = tmp_path / "cpp.jsonl", tmp_path / "c.jsonl"
    subprocess.run([str(consumer / "build/app")], env=env(ORCH_LOG_FILE=str(cpp_trace)), check=True, timeout=60)
    subprocess.run([str(consumer / "build/capp")], env=env(ORCH_LOG_FILE=str(c_trace)), check=True, timeout=60)
    assert len(list(open_trace(cpp_trace))) == 12
    (rec,) = list(open_trace(c_trace))
    assert (rec.checkpoint, rec.token_idx, rec.layer, rec.stage) == ("from_c", 7, 2, "mul_mat")
