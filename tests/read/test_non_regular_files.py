"""Only regular files are read: FIFOs, devices and sockets are refused or skipped at once, never waited on."""

from __future__ import annotations

import os
import socket
import time

import numpy as np
import pytest

from orchlog.errors import OrchlogError
from orchlog.read.paths import open_trace
from tests.tracegen import record, write_jsonl


def test_a_fifo_inside_a_directory_is_skipped_with_a_note_and_the_rest_is_read(tmp_path):
    write_jsonl(tmp_path / "run.jsonl", [record("a", np.ones(3, np.float32))])
    os.mkfifo(tmp_path / "pipe.jsonl")  # no writer: opening it to read would block forever
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        started = time.monotonic()
        trace = open_trace(tmp_path)
        assert [r.checkpoint for r in trace] == ["a"]
    assert time.monotonic() - started < 10
    notes = {os.path.basename(d.location.path): d.message for d in trace.diagnostics}
    assert "a FIFO, not a regular file" in notes["pipe.jsonl"] and "a socket" in notes["sock"]


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_given_as_the_trace_is_one_clear_error_at_once(kind, tmp_path):
    path = tmp_path / "pipe"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = "/dev/zero"  # endless: a reader that read it would never stop
    with pytest.raises(OrchlogError, match="not a regular file"):
        open_trace(path)


def test_a_dangling_link_in_a_directory_is_a_note_not_an_error(tmp_path):
    write_jsonl(tmp_path / "run.jsonl", [record("a", np.ones(3, np.float32))])
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere")
    trace = open_trace(tmp_path)
    assert len(list(trace)) == 1 and any("gone.jsonl" in str(d) for d in trace.diagnostics)


def test_the_commands_given_a_fifo_exit_2_with_one_line(tmp_path, capsys):
    from orchlog.cli import main

    os.mkfifo(tmp_path / "pipe")
    for command in (["show"], ["validate"], ["compare", str(tmp_path / "pipe")]):
        assert main([*command, str(tmp_path / "pipe")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "not a regular file" in err
