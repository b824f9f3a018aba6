"""`orchlog completion`: the scripts complete commands and options in a real shell."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest


def _script(shell: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "orchlog", "completion", shell], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _bash_complete(tmp_path, words: list[str]) -> list[str]:
    script = tmp_path / "orchlog.bash"
    script.write_text(_script("bash"))
    line = " ".join(words)
    program = f"""
source {script}
COMP_WORDS=({line})
COMP_CWORD={len(words) - 1}
COMP_LINE="{line}"
COMP_POINT=${{#COMP_LINE}}
_shtab_orchlog orchlog "{words[-1]}" "{words[-2]}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    proc = subprocess.run(["bash", "-c", program], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_command_names(tmp_path):
    assert "compare" in _bash_complete(tmp_path, ["orchlog", "comp"])


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_a_commands_options(tmp_path):
    assert "--tolerances" in _bash_complete(tmp_path, ["orchlog", "compare", "--tol"])


def test_zsh_and_tcsh_scripts_name_every_command():
    from orchlog.cli import COMMANDS

    for shell in ("zsh", "tcsh"):
        text = _script(shell)
        assert all(name in text for name in COMMANDS), shell
