"""Compiled-library mode (-DORCHLOG_COMPILED_LIB=ON): a consumer that links orchlog::orchlog_compiled
compiles none of the logger core, and logs exactly the bytes the header-only build logs.

One consumer project (add_subdirectory) builds the same two programs both ways: the
cross-language producer (every dtype, key part and meta kind of tests/crosslang/tensors.json,
through orchlog::log and Options) and the C++ quick start (the macros). Then an install
with the option exports orchlog::orchlog_compiled to find_package users.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.native.build import ROOT
from tests.native.host_processes import env

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake on PATH")]

CONSUMER_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(engine LANGUAGES CXX)
set(ORCHLOG_COMPILED_LIB ON CACHE BOOL "" FORCE)
add_subdirectory({orchlog} orchlog)
foreach(mode header_only compiled)
  if(mode STREQUAL "compiled")
    set(target orchlog::orchlog_compiled)
  else()
    set(target orchlog::orchlog)
  endif()
  add_executable(producer_${{mode}} {orchlog}/tests/crosslang/programs/cross_language.cpp)
  target_include_directories(producer_${{mode}} PRIVATE {orchlog}/native/cpp/tests)
  target_compile_definitions(producer_${{mode}} PRIVATE ORCHLOG_VECTORS_DIR="{orchlog}/schema/vectors")
  target_link_libraries(producer_${{mode}} PRIVATE ${{target}})
  add_executable(quickstart_${{mode}} {orchlog}/examples/cpp/quickstart.cpp)
  target_link_libraries(quickstart_${{mode}} PRIVATE ${{target}})
  target_compile_definitions(quickstart_${{mode}} PRIVATE ORCH_LOGGING)
endforeach()
"""
KNOBS = {"ORCH_LOG_MODE": "both", "ORCH_LOG_TEAM": "modes", "ORCH_LOG_VALUES": "all", "SOURCE_DATE_EPOCH": "1700000000"}


def _cmake(*args):
    proc = subprocess.run(["cmake", *args], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _kind(obj, function: str) -> set[str]:
    """The nm types of the symbols naming `function` (T or t defined, W defined inline, U undefined)."""
    out = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    return {line.split()[0 if line.startswith(" ") else 1] for line in out.splitlines() if f" {function}(" in line}


@pytest.fixture(scope="module")
def consumer(tmp_path_factory):
    root = tmp_path_factory.mktemp("compiled")
    (root / "CMakeLists.txt").write_text(CONSUMER_CMAKE.format(orchlog=ROOT.as_posix()))
    _cmake("-S", str(root), "-B", str(root / "build"), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release")
    _cmake("--build", str(root / "build"), "-j", "2")
    return root / "build"


@pytest.mark.parametrize(
    "program, args",
    [("producer", [str(ROOT / "tests/crosslang/tensors.json")]), ("quickstart", [])],
)
def test_both_modes_write_byte_identical_jsonl_and_binary_streams(consumer, tmp_path, program, args):
    outputs = {}
    for mode in ("header_only", "compiled"):
        trace = tmp_path / f"{mode}.jsonl"
        subprocess.run(
            [str(consumer / f"{program}_{mode}"), *args],
            env=env(ORCH_LOG_FILE=str(trace), **KNOBS),
            check=True,
            timeout=60,
        )
        outputs[mode] = (trace.read_bytes(), trace.with_name(trace.name + ".bin").read_bytes())
    jsonl, frames = outputs["compiled"]
    assert jsonl.count(b"\n") > 5 and len(frames) > 1000
    assert outputs["compiled"] == outputs["header_only"]


def test_the_compiled_mode_consumer_compiles_none_of_the_logger_core(consumer):
    objects = {
        mode: next((consumer / f"CMakeFiles/producer_{mode}.dir").rglob("*.o")) for mode in ("header_only", "compiled")
    }
    library = next(consumer.rglob("liborchlog_compiled.a"))
    for function in ("orchlog::detail::write_record", "orchlog::encode_record", "orchlog::blake3_hash"):
        assert _kind(objects["compiled"], function) <= {"U"}, function
        assert "T" in _kind(library, function), function
    assert _kind(objects["compiled"], "orchlog::detail::write_record") == {"U"}
    assert _kind(objects["header_only"], "orchlog::detail::write_record") & {"T", "W", "t"}, "defined there"


def test_an_install_exports_the_compiled_library_to_find_package(tmp_path):
    build, prefix = tmp_path / "build", tmp_path / "prefix"
    project = ["-S", str(ROOT), "-B", str(build), "-G", "Ninja"]
    _cmake(*project, "-DORCHLOG_COMPILED_LIB=ON", f"-DCMAKE_INSTALL_PREFIX={prefix}")
    _cmake("--build", str(build), "-j", "2")
    _cmake("--install", str(build))
    targets = (prefix / "lib/cmake/orchlog/orchlogTargets.cmake").read_text()
    assert "orchlog::orchlog_compiled" in targets and "ORCHLOG_COMPILED_LIB" in targets
    assert (prefix / "lib/liborchlog_compiled.a").exists()
