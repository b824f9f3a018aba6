"""A Rust host killed with SIGKILL while logging leaves a readable trace.

Every record the host wrote is whole (written by one call, flushed before
orch_log! returns); the reader gets every one of them, numbered without
gaps, and at most reports a truncated last record.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from orchlog import open_trace
from tests.cargo import rust_example


def log_until_killed(path: Path, mode: str, min_bytes: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_LOG_")}
    env.update(ORCH_LOG_FILE=str(path), ORCH_LOG_MODE=mode)
    host = subprocess.Popen([str(rust_example("log_loop")), "0", "4096"], env=env, stdout=subprocess.PIPE)
    try:
        assert host.stdout is not None
        assert host.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 30
        watched = Path(f"{path}.bin") if mode == "both" else path
        while watched.stat().st_size < min_bytes and time.monotonic() < deadline:
            time.sleep(0.01)
        host.send_signal(signal.SIGKILL)
    finally:
        host.kill()
        host.wait()
        assert host.stdout is not None
        host.stdout.close()
    assert host.returncode == -signal.SIGKILL


@pytest.mark.parametrize("mode", ["summary", "full", "both"])
def test_every_record_written_before_a_kill_reads_back(mode, tmp_path):
    path = tmp_path / "trace"
    log_until_killed(path, mode, min_bytes=2 << 20)
    files = [path, Path(f"{path}.bin")] if mode == "both" else [path]
    for file in files:
        trace = open_trace(file)
        seqs = [r.seq for r in trace]
        assert len(seqs) > 50, f"{file}: only {len(seqs)} records"
        assert seqs == list(range(len(seqs))), f"{file}: records missing or out of order"
        assert trace.header is not None
        assert trace.header["producer"]["language"] == "rust"
        truncated = [d for d in trace.diagnostics if "truncated" in d.message or "no newline" in d.message]
        assert len(trace.diagnostics) == len(truncated) <= 1, [str(d) for d in trace.diagnostics]
    if mode == "both":
        # The JSONL line of a record is written before its frame; a kill
        # between the two leaves the binary stream at most one record behind.
        jsonl, frames = (sum(1 for _ in open_trace(f)) for f in files)
        assert jsonl - frames in (0, 1)
