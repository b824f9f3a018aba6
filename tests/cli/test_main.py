"""The `orchlog` command: help with examples, one-line errors, exit codes."""

from __future__ import annotations

import subprocess
import sys

from orchlog.cli import COMMANDS


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchlog", *args], capture_output=True, text=True)


def test_top_level_help_lists_commands_and_an_example():
    proc = _run("--help")
    assert proc.returncode == 0
    assert "example:" in proc.stdout
    for name in COMMANDS:
        assert name in proc.stdout


def test_every_command_help_shows_an_example():
    for name in COMMANDS:
        proc = _run(name, "--help")
        assert proc.returncode == 0, name
        assert "example:" in proc.stdout, name


def test_unknown_command_is_one_line_and_exit_2():
    proc = _run("frobnicate")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_version_matches_the_schema_library_version():
    from orchlog import schema_gen

    assert _run("--version").stdout.strip() == f"orchlog {schema_gen.LIBRARY_VERSION}"


def test_minus_capital_v_prints_the_version_too():
    assert _run("-V").stdout == _run("--version").stdout
