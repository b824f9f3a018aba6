"""The README's Rust quick start works as written: its dependency line and its
code, in a fresh crate beside an orchlog checkout, build, run and log."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from orchlog import open_trace
from tests.cargo import CRATE, cargo, cargo_path, env
from tests.conftest import ROOT
from tests.markup import search


def quick_start_blocks() -> tuple[str, str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Rust quick start", 1)[1].split("\n## ", 1)[0]
    toml, rust = (search(rf"```{lang}\n(.*?)```", section, re.S).group(1) for lang in ("toml", "rust"))
    return toml, rust


def test_the_quick_start_builds_runs_and_writes_a_record(tmp_path):
    if cargo() is None:
        pytest.skip("cargo not found; scripts/bootstrap.sh installs it")
    dependency, code = quick_start_blocks()
    (tmp_path / "orchlog").symlink_to(ROOT, target_is_directory=True)
    engine = tmp_path / "my-engine"
    (engine / "src").mkdir(parents=True)
    (engine / "Cargo.toml").write_text(
        f'[package]\nname = "my-engine"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n{dependency}'
    )
    (engine / "src" / "main.rs").write_text(code)
    # The crate's own lock file pins the same dependency versions the suite tested.
    shutil.copy(CRATE / "Cargo.lock", engine / "Cargo.lock")
    run_env = {k: v for k, v in env().items() if not k.startswith("ORCH_LOG_")}
    run_env["ORCH_LOG_FILE"] = str(tmp_path / "ours.jsonl")
    subprocess.run([cargo_path(), "run", "--quiet"], cwd=engine, env=run_env, check=True, timeout=600)
    [record] = list(open_trace(tmp_path / "ours.jsonl"))
    assert (record.checkpoint, record.token_idx, record.shape) == ("embedding", 0, (896,))
