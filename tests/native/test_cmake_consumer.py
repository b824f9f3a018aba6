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

    # The same install serves pkg-config users: the C++ header-only package and the C library.
    pc_env = env(PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "orchlog"], env=pc_env, capture_output=True, text=True, check=True
    ).stdout.split()
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-DORCH_LOGGING",
            str(ROOT / "examples/cpp/quickstart.cpp"),
            "-o",
            str(tmp_path / "pc_app"),
            *flags,
        ],
        check=True,
        timeout=300,
    )
    c_flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "orchlog-c"], env=pc_env, capture_output=True, text=True, check=True
    ).stdout.split()
    subprocess.run(["gcc", str(consumer / "capp.c"), "-o", str(tmp_path / "pc_capp"), *c_flags], check=True, timeout=60)
    pc_trace = tmp_path / "pc.jsonl"
    subprocess.run(
        [str(tmp_path / "pc_capp")],
        env=env(ORCH_LOG_FILE=str(pc_trace), LD_LIBRARY_PATH=str(prefix / "lib")),
        check=True,
        timeout=60,
    )
    subprocess.run(
        [str(tmp_path / "pc_app")], env=env(ORCH_LOG_FILE=str(tmp_path / "pc_cpp.jsonl")), check=True, timeout=60
    )
    assert len(list(open_trace(pc_trace))) == 1 and len(list(open_trace(tmp_path / "pc_cpp.jsonl"))) == 12


SUBPROJECT_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(engine LANGUAGES CXX)
add_subdirectory({orchlog} orchlog)
add_executable(engine app.cpp)
target_link_libraries(engine PRIVATE orchlog::orchlog)
target_compile_definitions(engine PRIVATE ORCH_LOGGING)
install(TARGETS engine)
"""


def test_a_project_that_adds_orchlog_as_a_subdirectory_installs_nothing_of_orchlogs(tmp_path):
    engine, prefix = tmp_path / "engine", tmp_path / "prefix"
    engine.mkdir()
    (engine / "CMakeLists.txt").write_text(SUBPROJECT_CMAKE.format(orchlog=ROOT.as_posix()))
    shutil.copy(ROOT / "examples/cpp/quickstart.cpp", engine / "app.cpp")
    _cmake("-S", str(engine), "-B", str(engine / "build"), "-G", "Ninja", f"-DCMAKE_INSTALL_PREFIX={prefix}")
    _cmake("--build", str(engine / "build"), "-j", "2")
    _cmake("--install", str(engine / "build"))
    installed = sorted(p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file())
    assert installed == ["bin/engine"]
