"""`python -m examples.hunt`: a report, the command that reproduces it, and compare's exit code."""

from __future__ import annotations

import pytest

from examples.hunt.__main__ import main

pytestmark = pytest.mark.slow  # builds llama.cpp (cached)


def test_a_hunt_prints_the_report_and_the_command_and_exits_like_compare(hunt_dir, capsys):
    assert main(["--bug", "no_qkv_bias", "--out", str(hunt_dir)]) == 1
    out = capsys.readouterr().out
    assert "first divergence at token 0: Qcur, layer 0, stage add" in out
    assert f"orchlog compare {hunt_dir / 'llama.bin'} {hunt_dir / 'numpy-no_qkv_bias.bin'} --tolerances" in out


def test_an_unknown_bug_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--bug", "no_such_bug"])
    assert exit_info.value.code == 2
    assert "unknown bug" in capsys.readouterr().err
