"""Tensor names and paths from weight files reach no terminal as escape sequences, forge no report line and
break no Markdown table, in every report format, as compare's names do not."""

from __future__ import annotations

import json

import numpy as np
from safetensors.numpy import save_file

from orchlog.cli import main

NAME = "w\x1b]0;pwned\x07|<img src=x onerror=alert(1)>`x`\nRESULT: ok\u202e"


def _pair(tmp_path):
    a = {NAME: np.ones(4, np.float32), "same": np.zeros(3, np.float32)}
    b = {NAME: np.full(4, 2, np.float32), "same": np.zeros(3, np.float32), NAME + "2": np.ones(1, np.float32)}
    save_file(a, str(tmp_path / "a.safetensors"))
    save_file(b, str(tmp_path / "b.safetensors"))
    return str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")


def test_text_and_markdown_reports_show_hostile_names_escaped(tmp_path, capsys):
    a, b = _pair(tmp_path)
    for fmt in ("text", "md"):
        assert main(["weights", a, b, "--map", "none", "--quiet", "--format", fmt]) == 1
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        assert "\\x1b" in out and "\\u202e" in out
        assert not [line for line in out.splitlines() if line.startswith("RESULT: ok")]  # no line forged
    assert main(["weights", a, b, "--map", "none", "--quiet", "--format", "md"]) == 1
    md = capsys.readouterr().out
    lines = md.splitlines()
    table = lines.index("| weight | shapes | verdict |")
    differing = lines[table + 2 : table + 3]  # after the header and its rule: the one differing weight
    assert differing and differing[0].replace("\\|", "").count("|") == 4, differing
    assert "onerror" in differing[0] and differing[0].startswith("| ``")  # the name stays inside a code span


def test_the_json_report_keeps_the_names_exactly(tmp_path, capsys):
    a, b = _pair(tmp_path)
    assert main(["weights", a, b, "--map", "none", "--quiet", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [w["names"]["a"] for w in doc["weights"] if w["tier"] == "fail"] == [NAME]
    assert doc["only_in"]["b"] == [NAME + "2"]
