"""The next fields, added to a copy of the checkout as schema entries (and the sketch's one function per
language), are written by the C++ and Rust emitters built from that copy: byte for byte what the reference
encoder makes of the extended schema."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess

import pytest
import yaml

from orchlog.codegen import main as codegen
from orchlog.encoding.record import encode_header, encode_record
from tests import cargo
from tests.codegen import next_fields
from tests.native.build import CXX

pytestmark = pytest.mark.slow

DATA = [0.5, -1.25, 2.0, 3.5, -0.75, 1.0]
PINNED = "1767323045"

CPP = r"""
#include <orchlog/orchlog.hpp>
int main() {
  float x[6] = {0.5f, -1.25f, 2.0f, 3.5f, -0.75f, 1.0f};
  const orchlog::Key key = orchlog::Key{5, 3, "rope", 0}.with_request_id(151643).with_expert(1).with_beam(1)
      .with_num_experts(2).with_speculative(true).with_rank(1);
  orchlog::log("attn_out", {x, orchlog::DType::f32, {2, 3}}, key);
  orchlog::log("logits", {x, orchlog::DType::f32, {6}}, orchlog::Key{6});
  orchlog::close();
  return orchlog::status().errors == 0 ? 0 : 1;
}
"""

RUST = r"""
fn main() {
    let x = vec![0.5f32, -1.25, 2.0, 3.5, -0.75, 1.0];
    orchlog::orch_log!("attn_out", &x, 5usize, layer = 3, stage = "rope", step = 0, request_id = 151643,
        expert = 1, beam = 1, num_experts = 2, speculative = true, rank = 1, shape = [2, 3]);
    orchlog::orch_log!("logits", &x, 6usize);
    std::process::exit(if orchlog::error_count() == 0 { 0 } else { 1 });
}
"""


@pytest.fixture(scope="module")
def checkout(repo_root, tmp_path_factory):
    """A copy of the schema, the C++ headers and the Rust crate, with the next fields added and regenerated."""
    root = tmp_path_factory.mktemp("extended")
    shutil.copytree(repo_root / "schema", root / "schema")
    shutil.copytree(repo_root / "native" / "cpp" / "include", root / "native" / "cpp" / "include")
    shutil.copytree(repo_root / "native" / "rust", root / "native" / "rust", ignore=shutil.ignore_patterns("target"))
    (root / "schema" / "orchlog.schema.yaml").write_text(
        yaml.safe_dump(next_fields.raw_schema(repo_root), allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    digest_hpp = root / "native/cpp/include/orchlog/detail/encode/digest.hpp"
    text = digest_hpp.read_text()
    cut = text.rindex("}  // namespace detail")
    digest_hpp.write_text(text[:cut] + next_fields.SKETCH_CPP + "\n" + text[cut:])
    digest_rs = root / "native/rust/src/encoding/digest.rs"
    digest_rs.write_text(digest_rs.read_text() + next_fields.SKETCH_RUST)
    writer_hpp = root / "native/cpp/include/orchlog/detail/encode/msgpack_writer.hpp"
    text = writer_hpp.read_text()
    cut = text.index("\n private:\n")
    writer_hpp.write_text(text[:cut] + "\n" + next_fields.CRC_CPP + text[cut:])
    writer_rs = root / "native/rust/src/encoding/msgpack.rs"
    impl = "impl<'a> Visitor<'a> for MsgpackWriter<'_, 'a> {\n"
    writer_rs.write_text(writer_rs.read_text().replace(impl, impl + next_fields.CRC_RUST))
    with pytest.MonkeyPatch.context() as patch:
        next_fields.stand_in_functions(patch)
        assert codegen(["--quiet", "--root", str(root)]) == 0
    return root


def _expected(repo_root, language: str) -> dict[str, bytes]:
    """{file name: bytes} of a both-mode run: JSONL, and the binary stream beside it."""
    schema = next_fields.extended_schema(repo_root)
    settings = {"team": "t", "rank": 0, "world_size": 1, "values": 10, "model": None, "git_commit": None}
    data = struct.pack("<6f", *DATA)
    common = {"team": "t", "world_size": 1, "deterministic": True, "dtype": "f32", "data": data, "meta": {}}
    key = {"token_idx": 5, "layer": 3, "stage": "rope", "step": 0, "request_id": 151643, "expert": 1}
    key |= {"beam": 1, "num_experts": 2, "speculative": True, "rank": 1}
    with pytest.MonkeyPatch.context() as patch:
        next_fields.stand_in_functions(patch)  # the header frame carries the stand-in frame field too
        line, frame = encode_header(
            {"language": language, "created": "2026-01-02T03:04:05Z", **settings, "select": None}, schema
        )
        first = encode_record({"checkpoint": "attn_out", **common, **key, "shape": (2, 3), "seq": 0}, schema)
        second = encode_record({"checkpoint": "logits", **common, "token_idx": 6, "shape": (6,), "seq": 1}, schema)
    return {"run.jsonl": line + first.jsonl + second.jsonl, "run.jsonl.bin": frame + first.frame + second.frame}


def _run(program: list[str], out_dir) -> dict[str, bytes]:
    """Run a program logging in both modes with the new knob set; the files it wrote."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_LOG_")}
    env |= {"ORCH_LOG_FILE": str(out_dir / "run.jsonl"), "ORCH_LOG_MODE": "both", "ORCH_LOG_TEAM": "t"}
    env |= {"ORCH_LOG_DETERMINISTIC": "1", "SOURCE_DATE_EPOCH": PINNED}
    subprocess.run(program, env=env, check=True)
    return {p.name: p.read_bytes() for p in out_dir.iterdir() if p.name.startswith("run.")}


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH")
def test_the_cpp_logger_built_from_the_copy_writes_the_new_fields(repo_root, checkout, tmp_path):
    source = tmp_path / "log.cpp"
    source.write_text(CPP)
    exe = tmp_path / "log"
    include = checkout / "native" / "cpp" / "include"
    assert CXX is not None
    subprocess.run(
        [CXX, "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{include}", str(source), "-o", str(exe)], check=True
    )
    written = _run([str(exe)], tmp_path)
    assert json.loads(written["run.jsonl"].splitlines()[1])["request_id"] == 151643
    assert written == _expected(repo_root, "cpp")


def test_the_rust_crate_built_from_the_copy_writes_the_new_fields(repo_root, checkout, tmp_path):
    if cargo.cargo() is None:
        pytest.skip("cargo not found")
    crate = tmp_path / "app"
    (crate / "src").mkdir(parents=True)
    dependency = checkout / "native" / "rust"
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.0.0"\nedition = "2021"\n\n[workspace]\n\n'
        f'[dependencies]\norchlog = {{ path = "{dependency}", features = ["orch_logging"] }}\n'
    )
    (crate / "src" / "main.rs").write_text(RUST)
    shutil.copy(dependency / "Cargo.lock", crate / "Cargo.lock")  # the crate's pinned dependencies, offline
    # ... from the registry cache, which is empty on a fresh machine until something has fetched them.
    subprocess.run([cargo.cargo_path(), "fetch", "--locked", "--quiet"], cwd=dependency, env=cargo.env(), check=True)
    target = repo_root / ".cache" / "cargo-extended"  # kept between runs: only the copied crate recompiles
    subprocess.run(
        [cargo.cargo_path(), "build", "--quiet", "--offline"],
        cwd=crate,
        env=cargo.env() | {"CARGO_TARGET_DIR": str(target)},
        check=True,
    )
    assert _run([str(target / "debug" / "app")], tmp_path) == _expected(repo_root, "rust")
