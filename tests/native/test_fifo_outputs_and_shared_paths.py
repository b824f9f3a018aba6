"""Outputs that could hang or mix runs: a FIFO (with and without a reader) and one path given to two processes.

Every emitter, C++, C, Python (the C++ core), Rust and the Python Parquet
run: a FIFO with no reader is one warning and a host that carries on, a FIFO
with a reader gets the trace, and a second process on a path another one is
writing (no {pid} or {rank} in it) warns and writes nothing, so the first
one's file stays whole and valid.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from orchlog.read.paths import open_trace
from orchlog.read.validate import validate
from tests.cargo import rust_example
from tests.native import host_processes as hosts

PARQUET_HOST = r"""
import sys
import numpy as np
import orchlog
orchlog.configure(format="parquet", path=sys.argv[2], values=4)
count = int(sys.argv[1])
i = 0
while count < 0 or i < count:
    x = (np.float32(i) + np.arange(4 * 1024, dtype=np.float32) * np.float32(0.001)).reshape(4, 1024)
    orchlog.log("hidden", x, token_idx=i, layer=i % 24, stage="out", step=0)
    i += 1
    if i % 8 == 0:
        orchlog.flush()
print("done")
"""
EMITTERS = ["cpp", "c", "python", "rust", "parquet"]


def _argv(emitter: str, count: int, path) -> list[str]:
    if emitter == "rust":
        return [str(rust_example("log_loop")), str(max(count, 0)), "4096"]
    if emitter == "parquet":
        return [sys.executable, "-c", PARQUET_HOST, str(count), str(path)]
    return hosts.HOSTS[emitter](count)


def _start(emitter: str, count: int, path) -> subprocess.Popen:
    return subprocess.Popen(
        _argv(emitter, count, path),
        env=hosts.env(ORCH_LOG_FILE=str(path), ORCH_LOG_VALUES="4"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("orchlog: warning:")]


@pytest.mark.parametrize("emitter", EMITTERS)
def test_a_fifo_without_a_reader_is_one_warning_and_the_host_finishes(emitter, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    host = _start(emitter, 20, fifo)
    out, err = host.communicate(timeout=120)  # a host blocked on the FIFO would hit the timeout
    assert host.returncode == 0 and out.strip().splitlines()[-1].startswith(("done", "logged 20 records"))
    [warning] = _warnings(err)
    assert "cannot" in warning and "logging is off" in warning


@pytest.mark.parametrize("emitter", EMITTERS)
def test_a_fifo_with_a_reader_carries_the_whole_trace(emitter, tmp_path):
    fifo, received = tmp_path / "pipe", tmp_path / ("received.parquet" if emitter == "parquet" else "received")

    def drain() -> None:
        with open(fifo, "rb") as src, open(received, "wb") as dst:
            dst.write(src.read())

    os.mkfifo(fifo)
    reader = threading.Thread(target=drain)
    reader.start()
    time.sleep(0.2)  # the reader opens the FIFO first, as a consumer would
    host = _start(emitter, 20, fifo)
    _, err = host.communicate(timeout=120)
    reader.join(timeout=60)
    assert host.returncode == 0 and not _warnings(err), err
    assert [r.token_idx for r in open_trace(received)] == list(range(20))


@pytest.mark.parametrize("emitter", EMITTERS)
def test_a_second_process_on_the_same_path_warns_and_the_first_ones_file_stays_valid(emitter, tmp_path):
    path = tmp_path / ("run.parquet" if emitter == "parquet" else "run.jsonl")
    first = _start(emitter, -1, path)
    try:
        deadline = time.monotonic() + 60
        while (not path.exists() or path.stat().st_size < 64 << 10) and time.monotonic() < deadline:
            time.sleep(0.02)
        second = _start(emitter, 30, path)
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0
        [warning] = _warnings(err)
        assert "is being written by another process" in warning and "{pid}" in warning
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=60)
    trace = open_trace(path)
    report = validate(trace)
    assert report.records > 8 and len(trace.headers) == 1
    # At most the record the kill cut short; no second header, no sequence that restarts.
    assert all(
        "truncated" in p.message or "no newline" in p.message or "no footer" in p.message for p in report.problems
    ), [str(p) for p in report.problems]
