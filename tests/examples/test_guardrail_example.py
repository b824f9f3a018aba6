"""The bundled guardrail example: its tree comes from the committed generator, and the README shows what
`orchlog guardrail` really prints for it."""

from __future__ import annotations

import filecmp
import re
import shutil
import subprocess
import sys

from examples.guardrail.make_example import make_example
from orchlog.guardrail import FAIL_GUARDRAIL, PASS_GUARDRAIL, guardrail
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples/guardrail"


def _tree_files(root):
    return sorted(p.relative_to(root) for p in [root / "config.json", *(root / "runs").rglob("*")] if p.is_file())


def test_the_committed_tree_is_what_the_generator_writes_and_stays_small(tmp_path):
    make_example(tmp_path)
    assert _tree_files(tmp_path) == _tree_files(EXAMPLE)
    for rel in _tree_files(EXAMPLE):
        assert filecmp.cmp(tmp_path / rel, EXAMPLE / rel, shallow=False), rel
    assert sum((EXAMPLE / rel).stat().st_size for rel in _tree_files(EXAMPLE)) < 64 << 10


def test_the_example_passes_and_its_regressed_twin_fails_at_token_18(tmp_path):
    assert guardrail(EXAMPLE).verdict == PASS_GUARDRAIL
    make_example(tmp_path, regression=True)
    result = guardrail(tmp_path)
    assert result.first_fail is not None
    assert result.verdict == FAIL_GUARDRAIL and result.first_fail.label == "kv_aligned=1 seed=1"
    assert result.to_json()["first_fail"]["token_idx"] == 18


def test_the_readme_shows_the_command_and_what_it_prints(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Runs that must agree") :]
    section = section[: section.index("\n## ", 1)]
    (command,) = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    (shown,) = re.findall(r"```text\n(.*?)```", section, flags=re.S)
    shutil.copytree(EXAMPLE, tmp_path / "examples/guardrail", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    argv = command.split()
    assert argv[:3] == [".venv/bin/orchlog", "guardrail", "examples/guardrail"]
    proc = subprocess.run([sys.executable, "-m", "orchlog", *argv[1:]], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == shown
    assert (tmp_path / "examples/guardrail/summary.json").is_file()
