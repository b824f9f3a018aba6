"""The README's C++ and Python quick starts work as written.

Their code blocks must equal examples/cpp/quickstart.cpp and
examples/python/quickstart.py, and their shell blocks are run verbatim in a
scratch directory that links to the checkout.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from orchlog import SCHEMA_VERSION, open_trace
from tests.conftest import ROOT
from tests.native.host_processes import env


def _section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def _blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, flags=re.S)


def _run_shell(block: str, cwd) -> subprocess.CompletedProcess:
    for name in ("native", "examples", ".venv"):
        (cwd / name).symlink_to(ROOT / name)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=cwd, env=env(), capture_output=True, text=True, timeout=300
    )


def test_the_cpp_quick_start_is_the_example_file_and_its_commands_write_a_trace(tmp_path):
    section = _section("C++ quick start")
    (code,) = _blocks(section, "cpp")
    assert code == (ROOT / "examples/cpp/quickstart.cpp").read_text(encoding="utf-8")
    (commands,) = _blocks(section, "sh")
    proc = _run_shell(commands, tmp_path)
    assert proc.returncode == 0, proc.stderr
    trace = open_trace(tmp_path / "trace.jsonl")
    records = list(trace)
    assert trace.header is not None
    assert trace.header["team"] == "my-engine" and trace.header["producer"]["language"] == "cpp"
    assert [(r.checkpoint, r.token_idx, r.layer) for r in records[:3]] == [
        ("embedding", 0, None),
        ("attn_out", 0, 0),
        ("attn_out", 0, 1),
    ]
    assert len(records) == 12 and proc.stdout.startswith(f'{{"orchlog":{SCHEMA_VERSION},')


def test_the_python_quick_start_is_the_example_file_and_prints_what_it_says(tmp_path):
    if not (ROOT / ".venv/bin/python").exists():
        pytest.skip("no .venv in this checkout (./scripts/bootstrap.sh makes it)")
    section = _section("Python quick start")
    (code,) = _blocks(section, "python")
    assert code == (ROOT / "examples/python/quickstart.py").read_text(encoding="utf-8")
    (commands,) = _blocks(section, "sh")
    proc = _run_shell(commands, tmp_path)
    assert proc.returncode == 0, proc.stderr
    promised = commands.split("# prints:")[1].strip()
    assert proc.stdout.strip() == promised


def test_the_llama_cpp_snippet_is_taken_from_the_example_program_line_for_line():
    (code,) = _blocks(_section("Instrumenting llama.cpp and PyTorch"), "cpp")
    program = {line.strip() for line in (ROOT / "examples/llama_cpp/log_graph.cpp").read_text().splitlines()}
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    assert [line for line in lines if line not in program] == [
        "#include <orchlog/ggml.hpp>   // with llama.cpp's ggml.h and ggml-backend.h on the include path"
    ]


@pytest.mark.slow  # builds llama.cpp (cached), loads transformers
def test_the_model_file_to_verdict_commands_run_as_written_and_agree(tmp_path):
    if not (ROOT / ".venv/bin/python").exists():
        pytest.skip("no .venv in this checkout (./scripts/bootstrap.sh makes it)")
    (commands,) = _blocks(_section("From a model file to a verdict"), "sh")
    proc = _run_shell(commands, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "RESULT: ok" in proc.stdout and (tmp_path / "llama.bin").is_file() and (tmp_path / "hf.bin").is_file()
