"""Waiting for a forked child in a test: its exit code, or a failure naming the hang."""

from __future__ import annotations

import os
import signal
import time

import pytest


def exit_code(pid: int, hang: str, timeout: float = 30) -> int:
    """The exit code of child `pid`; a child still running after `timeout` seconds is killed and the test
    fails with `hang`."""
    deadline = time.monotonic() + timeout
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail(hang)
    return os.waitstatus_to_exitcode(done[1])
