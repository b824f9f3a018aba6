"""kill -9 in the middle of logging: everything written before reads back.

Each record is one write straight to the kernel, so a killed process leaves
every earlier record whole; at most the record being written is cut short,
and the reader reports that instead of failing.
"""

from __future__ import annotations

import signal
import subprocess
import time

import numpy as np
import pytest

from orchlog import open_trace
from tests.native import host_processes as hosts

WANT = 150  # records written before the kill


def _kill_after(argv, jsonl, timeout=60.0):
    proc = subprocess.Popen(
        argv,
        env=hosts.env(ORCH_LOG_FILE=str(jsonl), ORCH_LOG_MODE="both", ORCH_LOG_VALUES="4"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if jsonl.exists() and jsonl.read_bytes().count(b"\n") > WANT:
                break
            if proc.poll() is not None:
                assert proc.stderr is not None
                pytest.fail(f"the host exited early: {proc.stderr.read().decode()}")
            time.sleep(0.02)
        else:
            pytest.fail("the host did not write enough records in time")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def _check_prefix(path, full_tensors: bool) -> int:
    trace = open_trace(path)
    records = list(trace)
    assert len(records) >= WANT
    for i, rec in enumerate(records):
        assert (rec.seq, rec.token_idx, rec.layer) == (i, i, i % 24)
        assert rec.blake3 == hosts.blake3_of(i)
        if full_tensors:
            np.testing.assert_array_equal(rec.tensor(), hosts.tensor(i))
    # Nothing but, at most, one record cut short at the very end.
    assert len(trace.diagnostics) <= 1
    assert all(d.fatal for d in trace.diagnostics)
    return len(records)


@pytest.mark.parametrize("host", sorted(hosts.HOSTS))
def test_a_killed_logging_process_leaves_every_earlier_record_readable(host, tmp_path):
    jsonl = tmp_path / "run.jsonl"
    _kill_after(hosts.HOSTS[host](), jsonl)
    _check_prefix(jsonl, full_tensors=False)
    _check_prefix(tmp_path / "run.jsonl.bin", full_tensors=True)
