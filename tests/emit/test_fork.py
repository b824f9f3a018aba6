"""A Python process that forks after it started logging (a DataLoader worker, a multiprocessing pool): the
child never writes into the parent's trace, through the C++ core or a Parquet run. Without {pid} in the path
it logs nothing and says so in one warning; with {pid} it writes a run of its own.

Each case runs in a fresh interpreter whose child exits the ordinary way (atexit handlers run), as a pool
worker does.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from orchlog import open_trace

SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import orchlog

    path, fmt = sys.argv[1], sys.argv[2]
    orchlog.configure(path=path, **({{"format": "parquet"}} if fmt == "parquet" else {{}}))
    orchlog.log("parent", np.ones(3, np.float32), token_idx=0)
    child = os.fork()
    if child == 0:
        wrote = [orchlog.log("child", np.full(3, 2.0, np.float32), token_idx=t) for t in (1, 2)]
        print("child", os.getpid(), wrote, orchlog.stats().enabled, flush=True)
        sys.exit(0)  # atexit handlers run, as in a pool worker
    _, status = os.waitpid(child, 0)
    orchlog.log("parent", np.ones(3, np.float32), token_idx=3)
    orchlog.close()
    print("parent", os.getpid(), os.waitstatus_to_exitcode(status), flush=True)
    """
)


def _run(path, fmt: str) -> tuple[dict[str, tuple[int, str]], str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(), str(path), fmt], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    said = {line.split()[0]: (int(line.split()[1]), line) for line in done.stdout.splitlines()}
    return said, done.stderr


def _checkpoints(path) -> list[str]:
    trace = open_trace(path)
    out = [r.checkpoint for r in trace]
    assert not [d for d in trace.diagnostics if d.fatal], trace.diagnostics
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_forked_child_writes_nothing_into_its_parents_trace_and_says_so_once(fmt, tmp_path):
    path = tmp_path / f"run.{fmt}"
    said, stderr = _run(path, fmt)
    child, parent = said["child"][0], said["parent"][0]
    assert said["child"][1].endswith("[False, False] False")
    assert said["parent"][1].endswith(" 0")
    assert stderr.splitlines() == [
        f"orchlog: warning: this process (pid {child}) was forked from pid {parent}, which writes {path}; it writes "
        "nothing there (put {pid} in ORCH_LOG_FILE to give each process its own file); logging is off"
    ]
    assert _checkpoints(path) == ["parent", "parent"]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_with_pid_in_the_path_a_forked_child_writes_a_run_of_its_own(fmt, tmp_path):
    said, stderr = _run(tmp_path / f"run-{{pid}}.{fmt}", fmt)
    assert stderr == ""
    assert said["child"][1].endswith("[True, True] True")
    assert _checkpoints(tmp_path / f"run-{said['parent'][0]}.{fmt}") == ["parent", "parent"]
    assert _checkpoints(tmp_path / f"run-{said['child'][0]}.{fmt}") == ["child", "child"]
