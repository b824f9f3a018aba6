"""A Rust host that logs through orch_log! survives every logging failure.

Each test runs the crate's `log_loop` example (an engine stand-in that logs
100 records) in a subprocess: it must exit 0, finish its own work, and see
exactly one warning on stderr and the error counter go up.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from orchlog import open_trace
from tests.cargo import rust_example

MODES = ["summary", "full", "both"]


def run_host(env_knobs: dict[str, str], count: int = 100) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_LOG_")}
    env.update(env_knobs)
    return subprocess.run(
        [str(rust_example("log_loop")), str(count), "256"], env=env, capture_output=True, text=True, timeout=60
    )


def warnings(done: subprocess.CompletedProcess) -> list[str]:
    lines = done.stderr.splitlines()
    assert all(line.startswith("orchlog: warning: ") for line in lines), done.stderr
    return lines


@pytest.mark.parametrize("mode", MODES)
def test_a_full_disk_gives_one_warning_and_the_host_carries_on(mode):
    done = run_host({"ORCH_LOG_FILE": "/dev/full", "ORCH_LOG_MODE": mode})
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "logged 100 records, 1 errors"
    [warning] = warnings(done)
    assert "No space left on device" in warning and warning.endswith("logging is off")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["proc", "under_a_file"])
def test_an_unwritable_path_gives_one_warning_and_the_host_carries_on(mode, where, tmp_path):
    # /proc takes no new files, even from root; a path through a regular file
    # cannot be created by anyone.
    (tmp_path / "a_file").write_text("")
    path = {"proc": "/proc/orchlog-test/trace.jsonl", "under_a_file": str(tmp_path / "a_file" / "trace.jsonl")}[where]
    done = run_host({"ORCH_LOG_FILE": path, "ORCH_LOG_MODE": mode})
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "logged 100 records, 1 errors"
    [warning] = warnings(done)
    assert "cannot create" in warning


def test_a_malformed_knob_gives_one_warning_and_its_default(tmp_path):
    path = tmp_path / "trace.jsonl"
    done = run_host({"ORCH_LOG_FILE": str(path), "ORCH_LOG_VALUES": "lots"}, count=5)
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "logged 5 records, 1 errors"  # counted, as in the C++ logger
    [warning] = warnings(done)
    assert "ORCH_LOG_VALUES" in warning
    records = list(open_trace(path))
    assert len(records) == 5 and all(r.values is not None and len(r.values) == 10 for r in records)


def test_an_invalid_selector_gives_one_warning_and_writes_nothing(tmp_path):
    path = tmp_path / "trace.jsonl"
    done = run_host({"ORCH_LOG_FILE": str(path), "ORCH_LOG_SELECT": "layer=3-1"}, count=5)
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "logged 5 records, 1 errors"
    [warning] = warnings(done)
    assert "ORCH_LOG_SELECT" in warning and "layer=3-1" in warning
    assert not path.exists()


def test_rank_and_pid_are_substituted_in_the_file_name(tmp_path):
    done = run_host({"ORCH_LOG_FILE": str(tmp_path / "trace-{rank}-{pid}.jsonl"), "ORCH_LOG_RANK": "3"}, count=2)
    assert done.returncode == 0 and done.stderr == ""
    [written] = list(tmp_path.iterdir())
    assert written.name.startswith("trace-3-") and written.name != "trace-3-{pid}.jsonl"
    assert [r.rank for r in open_trace(written)] == [3, 3]
