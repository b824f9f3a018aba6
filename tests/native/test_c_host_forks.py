"""A C host (liborchlog_c) that forks after it started logging: the child writes nothing into the parent's
file and says so once, or with {pid} in ORCH_LOG_FILE writes a run of its own."""

from __future__ import annotations

import os
import subprocess

from orchlog.read.paths import open_trace
from tests.native import build


def _run(path) -> tuple[int, int, str]:
    """(the child's pid, the parent's, stderr) of tests/native/programs/fork_child.c logging to `path`."""
    exe = build.build_c(build.PROGRAMS / "fork_child.c")
    env = {**os.environ, "ORCH_LOG_FILE": str(path)}
    done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    child, parent = map(int, done.stdout.split())
    return child, parent, done.stderr


def _tokens(path) -> list[int | None]:
    return [r.token_idx for r in open_trace(path)]


def test_a_forked_child_of_a_c_host_writes_nothing_into_its_parents_file_and_says_so_once(tmp_path):
    path = tmp_path / "run.jsonl"
    child, parent, stderr = _run(path)
    assert stderr.splitlines() == [
        f"orchlog: warning: this process (pid {child}) was forked from pid {parent}, which writes {path}; it writes "
        "nothing there (put {pid} in ORCH_LOG_FILE to give each process its own file); logging is off"
    ]
    assert _tokens(path) == [0, 3]


def test_with_pid_in_the_path_a_forked_child_of_a_c_host_writes_a_run_of_its_own(tmp_path):
    child, parent, stderr = _run(tmp_path / "run-{pid}.jsonl")
    assert stderr == ""
    assert _tokens(tmp_path / f"run-{parent}.jsonl") == [0, 3]
    assert _tokens(tmp_path / f"run-{child}.jsonl") == [1, 2]
