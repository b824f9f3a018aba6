"""A trace whose writer is still running: its lock says so, and show, validate and compare say it too."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from orchlog import open_trace
from orchlog.read import writers

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import orchlog

    orchlog.configure(path=sys.argv[1], team="live")
    for token in range(3):
        orchlog.log("x", np.full(4, token, np.float32), token_idx=token)
    print("written", flush=True)
    sys.stdin.readline()  # running, its file open and locked, until told to stop
    """
)

pytestmark = pytest.mark.skipif(not writers.LOCKS.exists(), reason="reads the locks from /proc/locks (Linux)")


@pytest.fixture
def live(tmp_path):
    """A trace directory whose run.jsonl a running emitter holds; (directory, file, the writer's pid)."""
    path = tmp_path / "trace" / "run.jsonl"
    path.parent.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "written\n"
    yield path.parent, path, proc.pid
    proc.communicate("stop\n", timeout=60)


def _orchlog(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchlog", *args], capture_output=True, text=True, timeout=120)


def test_a_trace_whose_writer_runs_is_still_being_written_and_not_once_it_ended(live):
    directory, path, pid = live
    assert open_trace(path).writing == [(str(path), pid)]
    assert open_trace(directory).writing == [(str(path), pid)]
    assert [r.token_idx for r in open_trace(path)] == [0, 1, 2]  # and what it wrote so far reads as usual


def test_a_finished_trace_has_no_writer(tmp_path):
    path = tmp_path / "run.jsonl"
    done = subprocess.run([sys.executable, "-c", WRITER, str(path)], input="stop\n", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert open_trace(path).writing == []


def test_show_validate_and_compare_say_the_trace_is_still_being_written(live, tmp_path):
    _, path, pid = live
    said = f"{path} (process {pid} holds its lock)"
    show = _orchlog("show", str(path))
    assert f"still being written: {said}; shown is the part written so far" in show.stdout
    assert json.loads(_orchlog("show", str(path), "--format", "json").stdout)["writing"] == [
        {"path": str(path), "pid": pid}
    ]
    validate = _orchlog("validate", str(path))
    assert validate.returncode == 0, validate.stdout
    assert f"note: still being written: {said}; checked is the part written so far" in validate.stdout
    assert json.loads(_orchlog("validate", str(path), "--format", "json").stdout)["writing"] == [
        {"path": str(path), "pid": pid}
    ]
    other = tmp_path / "other.jsonl"
    other.write_bytes(Path(path).read_bytes())
    compare = _orchlog("compare", str(other), str(path), "-q")
    assert compare.stderr.splitlines() == [
        f"orchlog: note: {path} is still being written (process {pid} holds its lock): "
        "compared is the part written so far"
    ]


def test_only_granted_exclusive_flocks_count():
    text = (
        "1: FLOCK  ADVISORY  WRITE 6973 fe:00:10035210 0 EOF\n"
        "1: -> FLOCK  ADVISORY  WRITE 7000 fe:00:10035210 0 EOF\n"  # waiting, not holding
        "2: FLOCK  ADVISORY  READ 6974 fe:00:42 0 EOF\n"  # shared: not how a writer claims
        "3: POSIX  ADVISORY  WRITE 6975 08:01:43 0 EOF\n"  # fcntl locks are someone else's
        "4: OFDLCK ADVISORY  WRITE -1 08:01:44 0 EOF\n"
    )
    assert writers._exclusive_flocks(text) == {(0xFE, 0x00, 10035210): 6973}


def test_without_a_thread_to_spare_the_table_is_read_at_once(live, monkeypatch):
    directory, path, pid = live

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    assert writers.LockTable().writers(directory) == [(str(path), pid)]


def test_a_command_reads_the_table_once_from_its_start_and_a_caller_outside_one_afresh(live, monkeypatch):
    directory, path, pid = live
    reads = []
    read = writers.LockTable._read

    def counted(self):
        reads.append(1)
        read(self)

    monkeypatch.setattr(writers.LockTable, "_read", counted)
    with writers.read_ahead():
        assert writers.live_writers(path) == writers.live_writers(directory) == [(str(path), pid)]
        assert open_trace(path).writing == [(str(path), pid)]
    assert reads == [1]
    assert writers.live_writers(path) == [(str(path), pid)]
    assert reads == [1, 1]
