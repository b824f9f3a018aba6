"""The `orchlog` process exits through `run()`: its objects frozen before the interpreter's last collection,
its atexit handlers and exit code as `main()` leaves them."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

# Runs `python -m orchlog ARGS` with an atexit handler of its own, registered before orchlog's: it runs last
# and reports what the exit looked like.
_PROBE = """
import atexit, gc, runpy, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count(), file=sys.stderr))
sys.argv = ["orchlog", *sys.argv[1:]]
runpy.run_module("orchlog", run_name="__main__")
"""


def _probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True)


def test_a_successful_command_exits_0_with_its_objects_frozen_and_its_atexit_handlers_run():
    proc = _probe("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith("orchlog ")
    frozen = int(proc.stderr.split("frozen at exit:")[1])
    assert frozen > 1000  # the modules' objects, at least


def test_a_failing_command_keeps_its_exit_code():
    proc = _probe("compare", "/nonexistent/a.jsonl", "/nonexistent/b.jsonl")
    assert proc.returncode == 2
    assert "frozen at exit:" in proc.stderr


def test_the_console_script_is_run():
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "orchlog"]
    assert script.value == "orchlog.cli:run"
