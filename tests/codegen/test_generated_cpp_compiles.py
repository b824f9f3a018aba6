"""The generated C++ header compiles warning-free and walks fields in vector order."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.conftest import load_vectors

CXX = shutil.which("g++") or shutil.which("c++")

PROGRAM = r"""
#include <iostream>
#include <string>
#include "orchlog/schema_gen.hpp"
namespace s = orchlog::schema;
struct Keys {
  int depth = 0;
  void begin_object(std::size_t) { ++depth; }
  void end_object() { --depth; }
  void key(std::string_view k) { if (depth == 1) std::cout << k << "\n"; }
  template <class T> void str(T) {}
  template <class T> void opt_str(T) {}
  template <class T> void i32(T) {}
  template <class T> void opt_i32(T) {}
  template <class T> void i64(T) {}
  template <class T> void opt_i64(T) {}
  template <class T> void opt_boolean(T) {}
  template <class T> void opt_f64(T) {}
  template <class T> void boolean(T) {}
  template <class T> void dtype(T) {}
  template <class T> void shape(T) {}
  template <class T> void values(T) {}
  template <class T> void hex256(T) {}
  template <class T> void meta(T) {}
  template <class T> void floats_f32(T) {}
  template <class T> void floats_f32_hex(T) {}
  template <class T> void bytes(T) {}
  void frame_crc32c() { key("crc32c"); }  // the binary writer writes the checksum's key itself
};
int main() {
  Keys k;
  s::visit_record<s::Encoding::jsonl>(k, s::RecordView{});
  std::cout << "--\n";
  s::visit_header<s::Encoding::msgpack>(k, s::HeaderView{});
  static_assert(s::dtype_size(*s::dtype_from_name("bfloat16")) == 2, "bf16 is 2 bytes");
}
"""


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH")
def test_generated_header_compiles_and_visits_in_schema_order(repo_root, tmp_path):
    src = tmp_path / "smoke.cpp"
    src.write_text(PROGRAM)
    exe = tmp_path / "smoke"
    assert CXX is not None
    subprocess.run(
        [
            CXX,
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            f"-I{repo_root / 'native/cpp/include'}",
            str(src),
            "-o",
            str(exe),
        ],
        check=True,
    )
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    record_keys, header_keys = (part.split() for part in out.split("--"))
    line = json.loads(load_vectors("records.json")["cases"][0]["expected"]["jsonl"])
    assert record_keys == list(line)
    header = json.loads(load_vectors("headers.json")["cases"][0]["expected"]["jsonl"])
    assert header_keys == [*header, "crc32c"]  # the binary stream's header frame ends with its checksum
