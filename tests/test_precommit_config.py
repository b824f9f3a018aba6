""".pre-commit-config.yaml: valid, and runs the test command's checks with the venv's pinned tools (nothing fetched)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".pre-commit-config.yaml"


def _hooks() -> list[dict[str, object]]:
    return [hook for repo in yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["repos"] for hook in repo["hooks"]]


def test_pre_commit_accepts_the_config():
    pytest.importorskip("pre_commit")
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(CONFIG)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_hook_is_local_and_installs_nothing():
    repos = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["repos"]
    assert [repo["repo"] for repo in repos] == ["local"]
    assert {hook["language"] for hook in _hooks()} == {"system"}


def test_the_hooks_are_the_checks_of_the_test_command():
    assert {hook["id"] for hook in _hooks()} == {
        "ruff-check",
        "ruff-format",
        "mypy",
        "codegen-check",
        "clang-format",
        "cargo-fmt",
    }
    for hook in _hooks():
        entry = str(hook["entry"])
        assert entry.startswith((".venv/bin/python ", "cargo ")), entry
