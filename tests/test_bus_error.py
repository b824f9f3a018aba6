"""A file cut shorter by another process while orchlog reads it through a mapping: the `orchlog` command
says so in one line that names the file and exits 2; a library caller's process keeps the default action
(its signals are its own). Each case runs in a subprocess, where the bus error happens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from orchlog import bus_error, kernels

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")

# Maps the file through the binary reader's own mapping, cuts the file to a page, then reads the last
# mapped byte: past the new end.
_CUT_UNDER_A_MAPPING = """
import os, pathlib
from orchlog.read.formats import orchlog_frames
path = pathlib.Path({path!r})
with open(path, "rb") as f:
    view = orchlog_frames._map(f, 0, path.stat().st_size)
os.truncate(path, 4096)
print("read", view[len(view) - 1], flush=True)
"""


def _cut_script(tmp_path, name: str = "trace.bin") -> str:
    """A 256 KiB file (64 pages) in tmp_path, and the script that maps it, cuts it and reads past the cut."""
    path = tmp_path / name
    path.write_bytes(bytes(range(256)) * 1024)
    return _CUT_UNDER_A_MAPPING.format(path=str(path))


def _named(tmp_path, name: str = "trace.bin") -> str:
    """The line for that file, as the kernel names it (its real path)."""
    return bus_error.LINE.replace("{path}", os.path.realpath(tmp_path / name)) + "\n"


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


def test_a_library_caller_keeps_the_default_action(tmp_path):
    done = _run("import orchlog.cli\n" + _cut_script(tmp_path))  # imported, but this process is not the command's
    assert done.returncode == -signal.SIGBUS, done.stderr[-2000:]
    assert "read" not in done.stdout


def test_a_declared_process_reports_the_cut_in_one_line_and_exits_2(tmp_path):
    done = _run("from orchlog import bus_error\nbus_error.exit_with()\n" + _cut_script(tmp_path))
    assert done.returncode == 2, f"signal {-done.returncode}: {done.stderr[-2000:]}"
    assert done.stderr == _named(tmp_path)
    assert done.stdout == ""


def test_a_path_with_spaces_is_named_whole(tmp_path):
    name = "a trace  with spaces.bin"
    done = _run("from orchlog import bus_error\nbus_error.exit_with()\n" + _cut_script(tmp_path, name))
    assert done.returncode == 2, f"signal {-done.returncode}: {done.stderr[-2000:]}"
    assert done.stderr == _named(tmp_path, name)


def test_a_line_without_a_place_for_the_path_is_written_as_it_is(tmp_path):
    line = "orchlog: error: cut"
    done = _run(f"from orchlog import bus_error\nbus_error.exit_with({line!r})\n" + _cut_script(tmp_path))
    assert done.returncode == 2
    assert done.stderr == line + "\n"


def test_the_orchlog_process_declares_itself(tmp_path):
    """`orchlog.cli.run`, the console script's entry, installs the answer before its command runs."""
    command = _cut_script(tmp_path)
    script = textwrap.dedent(
        f"""
        import orchlog.cli
        def main():
            exec({command!r}, {{}})
            return 0
        orchlog.cli.main = main
        orchlog.cli.run()
        """
    )
    done = _run(script)
    assert done.returncode == 2, f"signal {-done.returncode}: {done.stderr[-2000:]}"
    assert done.stderr == _named(tmp_path)


def test_a_longer_line_is_cut_to_a_kibibyte(tmp_path):
    done = _run(f"from orchlog import bus_error\nbus_error.exit_with({'x' * 5000!r})\n" + _cut_script(tmp_path))
    assert done.returncode == 2
    assert done.stderr == "x" * 1023 + "\n"


def test_a_path_too_long_to_hold_gives_the_line_without_it(tmp_path):
    """The handler holds 4 KiB of a /proc/self/maps line; a mapped path near PATH_MAX does not fit it."""
    deep = tmp_path
    while len(str(deep)) < 4060:  # a 4,070-byte path after the 73 bytes that begin its line: past 4 KiB
        deep = deep / ("d" * min(200, 4060 - len(str(deep))))
    deep.mkdir(parents=True)
    done = _run("from orchlog import bus_error\nbus_error.exit_with()\n" + _cut_script(deep))
    assert done.returncode == 2, f"signal {-done.returncode}: {done.stderr[-2000:]}"
    assert done.stderr == bus_error.LINE.replace("{path}", bus_error.UNNAMED) + "\n"
