"""Colour: on a terminal by default, never when piped, off with NO_COLOR (any non-empty value), and as
--color auto|always|never says."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from tests.compare.runs import from_layer, run
from tests.tracegen import write_jsonl

ESC = "\x1b["


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("colour")
    return write_jsonl(d / "a.jsonl", run()), write_jsonl(d / "b.jsonl", run(bug=from_layer(1, 1, "Qcur")))


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    return {**env, "TERM": "xterm", **extra}


def _on_terminal(args: list[str], **env: str) -> str:
    """What the command writes to stdout and stderr when both are a terminal (a pseudo-terminal here)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchlog", *args], stdout=follower, stderr=follower, env=_env(**env), close_fds=True
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


def _piped(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchlog", *args], capture_output=True, text=True, env=_env(**env))


def _compare(traces, *extra: str) -> list[str]:
    return ["compare", str(traces[0]), str(traces[1]), "--no-diagnose", "-q", *extra]


def test_a_terminal_gets_colour_and_a_pipe_does_not(traces):
    shown = _on_terminal(_compare(traces))
    assert ESC + "31m" in shown and "FIRST DIVERGENCE" in shown
    piped = _piped(_compare(traces))
    assert piped.returncode == 1 and ESC not in piped.stdout and "FIRST DIVERGENCE" in piped.stdout


@pytest.mark.parametrize("value", ["1", "true", "0", "anything"])
def test_no_color_with_any_non_empty_value_turns_colour_off(traces, value):
    assert ESC not in _on_terminal(_compare(traces), NO_COLOR=value)


def test_an_empty_no_color_leaves_colour_on(traces):
    assert ESC in _on_terminal(_compare(traces), NO_COLOR="")


def test_color_always_colours_a_pipe_and_never_leaves_a_terminal_plain(traces):
    assert ESC in _piped(_compare(traces, "--color", "always")).stdout
    assert ESC in _piped(["--color=always", *_compare(traces)]).stdout  # before the command, too
    assert ESC not in _on_terminal(_compare(traces, "--color", "never"))


def test_errors_are_red_on_a_terminal_and_plain_when_piped(tmp_path):
    missing = str(tmp_path / "missing")
    shown = _on_terminal(["validate", missing])
    assert f"{ESC}1m{ESC}31morchlog: error:" in shown
    piped = _piped(["validate", missing])
    assert piped.returncode == 2 and piped.stderr.startswith("orchlog: error: ")


def test_piped_output_never_imports_the_colour_library(traces):
    code = (
        "import sys\nfrom orchlog.cli import main\n"
        f"main({_compare(traces)!r})\nassert 'termcolor' not in sys.modules, 'termcolor imported'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr


def test_colour_paints_lines_and_leaves_zero_counts_plain():
    from orchlog.cli.colour import paint

    text = "RESULTS:\n  fail               0\n  fail               3\nRESULT: ok, all 3 pairs proven\nplain line\n"
    lines = paint(text).split("\n")
    assert lines[1] == "  fail               0" and lines[2].startswith(ESC + "31m")
    assert lines[3].startswith(ESC + "1m" + ESC + "32m") and lines[4] == "plain line"
