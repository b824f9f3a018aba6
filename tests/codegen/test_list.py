"""`orchlog codegen --list` names exactly the files codegen writes, which formatters and linters leave alone."""

from __future__ import annotations

import subprocess
import sys

from orchlog.codegen import generate_all, generated_paths


def test_the_list_is_every_file_codegen_writes_and_nothing_else(repo_root):
    assert generated_paths() == sorted(generate_all())
    assert all((repo_root / rel).is_file() for rel in generated_paths())


def test_the_command_prints_the_list_one_path_a_line_and_writes_nothing(repo_root):
    done = subprocess.run(
        [sys.executable, "-m", "orchlog.codegen", "--list"], cwd=repo_root, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == generated_paths()
    assert done.stderr == ""
