"""The generated Rust module builds warning-free and walks fields in vector order."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.conftest import load_vectors

CARGO = shutil.which("cargo") or (
    os.path.expanduser("~/.cargo/bin/cargo") if os.path.exists(os.path.expanduser("~/.cargo/bin/cargo")) else None
)

MAIN = r"""
#[path = "%(path)s"]
mod schema_gen;
use schema_gen::*;

struct Keys { depth: usize }
impl Visitor<'_> for Keys {
    fn begin_object(&mut self, _len: usize) { self.depth += 1; }
    fn key(&mut self, key: &'static str) { if self.depth == 1 { println!("{key}"); } }
    fn end_object(&mut self) { self.depth -= 1; }
    fn str(&mut self, _v: &str) {}
    fn opt_str(&mut self, _v: Option<&str>) {}
    fn i32(&mut self, _v: i32) {}
    fn opt_i32(&mut self, _v: Option<i32>) {}
    fn i64(&mut self, _v: i64) {}
    fn opt_i64(&mut self, _v: Option<i64>) {}
    fn f64(&mut self, _v: f64) {}
    fn opt_f64(&mut self, _v: Option<f64>) {}
    fn boolean(&mut self, _v: bool) {}
    fn opt_boolean(&mut self, _v: Option<bool>) {}
    fn floats_f32(&mut self, _v: &[f64]) {}
    fn floats_f32_hex(&mut self, _v: &[f64]) {}
    fn floats_f64(&mut self, _v: &[f64]) {}
    fn dtype(&mut self, _v: DType) {}
    fn shape(&mut self, _v: &[i64]) {}
    fn values(&mut self, _v: &ValuesView<'_>) {}
    fn hex256(&mut self, _v: &str) {}
    fn meta(&mut self, _v: &[MetaEntry<'_>]) {}
    fn bytes(&mut self, _v: &[u8]) {}
}

fn main() {
    let stats = Stats::default();
    let r = RecordView {
        checkpoint: "x", team: "", token_idx: None, layer: None, stage: None, step: None, rank: 0,
        token_id: None, shard_axis: None, shard_index: None, num_shards: 1, shard_partial: None, world_size: 1, seq: 0, dtype: DType::F32, shape: &[], numel: 1,
        values: ValuesView { dtype: DType::F32, data: &[], count: 0 }, stats, sketch: &[0.0; 64], blake3: "",
        meta: &[], grafted: false, full_reason: None, data: &[],
    };
    let mut k = Keys { depth: 0 };
    visit_record(&mut k, &r, Encoding::Jsonl);
    assert_eq!(DType::from_name("bfloat16").map(DType::size), Some(2));
}
"""


@pytest.mark.skipif(CARGO is None, reason="cargo not found")
def test_generated_module_builds_and_visits_in_schema_order(repo_root, tmp_path):
    crate = tmp_path / "smoke"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text('[package]\nname = "smoke"\nversion = "0.0.0"\nedition = "2021"\n')
    (crate / "src/main.rs").write_text(MAIN % {"path": repo_root / "native/rust/src/schema_gen.rs"})
    env = dict(os.environ, CARGO_TARGET_DIR=str(repo_root / ".cache/cargo-smoke"), RUSTFLAGS="-D warnings")
    assert CARGO is not None
    out = subprocess.run(
        [CARGO, "run", "--quiet", "--offline"], cwd=crate, env=env, check=True, capture_output=True, text=True
    ).stdout
    line = json.loads(load_vectors("records.json")["cases"][0]["expected"]["jsonl"])
    assert out.split() == list(line)
