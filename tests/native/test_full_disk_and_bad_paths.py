"""A host whose log cannot be written carries on and exits 0 with one warning:
a full disk (/dev/full) or an unwritable path, from C++ and from Python."""

from __future__ import annotations

import subprocess

import pytest

from tests.native import host_processes as hosts


def _run(host: str, path: str, mode: str = "summary") -> subprocess.CompletedProcess:
    return subprocess.run(
        hosts.HOSTS[host](100),
        env=hosts.env(ORCH_LOG_FILE=path, ORCH_LOG_MODE=mode),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("orchlog: warning:")]


@pytest.mark.parametrize("host", sorted(hosts.HOSTS))
@pytest.mark.parametrize("mode", ["summary", "full", "both"])
def test_logging_to_a_full_disk_exits_0_with_one_warning(host, mode):
    proc = _run(host, "/dev/full", mode)
    assert proc.returncode == 0 and proc.stdout.strip() == "done"
    (warning,) = _warnings(proc.stderr)
    assert "No space left on device" in warning and "logging is off" in warning
    assert proc.stderr.strip() == warning


@pytest.mark.parametrize("host", sorted(hosts.HOSTS))
def test_an_unwritable_path_exits_0_with_one_warning(host, tmp_path):
    proc = _run(host, str(tmp_path / "no-such-dir" / "trace.jsonl"))
    assert proc.returncode == 0 and proc.stdout.strip() == "done"
    (warning,) = _warnings(proc.stderr)
    assert "cannot open" in warning and "No such file or directory" in warning
