"""`orchlog trace llama` and `orchlog trace hf` on the command line: from a GGUF file and its HF directory to a
verdict with no options, the right first divergence for a planted weight change, what a tool reads back, and
one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # builds llama.cpp (cached), loads transformers

PROMPT = "The quick brown fox, 12 dogs!"


def _orchlog(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "orchlog", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def _traces(pair, tmp_path):
    llama = _orchlog("trace", "llama", pair.gguf, "--prompt", PROMPT, "-o", tmp_path / "llama.bin")
    hf = _orchlog("trace", "hf", pair.hf, "--prompt", PROMPT, "-o", tmp_path / "hf.bin")
    assert llama.returncode == 0 and hf.returncode == 0, llama.stderr + hf.stderr
    return llama, hf


def test_the_two_traces_of_one_model_agree_with_no_options(model_pair, tmp_path):
    llama, hf = _traces(model_pair, tmp_path)
    assert f"trace: {tmp_path / 'llama.bin'} (full," in llama.stdout
    assert "orchlog compare" in llama.stdout and "ORCH_LOG_AGAINST=" in llama.stdout  # what to run next
    compared = _orchlog("compare", tmp_path / "llama.bin", tmp_path / "hf.bin")
    assert compared.returncode == 0, compared.stdout
    assert "RESULT: ok" in compared.stdout and "RUNS DIFFER" not in compared.stdout
    assert "Token ids: the same at all" in compared.stdout


def test_one_planted_weight_change_is_the_first_divergence(planted_pair, tmp_path):
    _traces(planted_pair, tmp_path)
    compared = _orchlog("compare", tmp_path / "llama.bin", tmp_path / "hf.bin", "--format", "json")
    assert compared.returncode == 1
    report = json.loads(compared.stdout)
    first = report["first_divergence"]
    assert (first["checkpoint"], first["layer"], first["token_idx"]) == ("ffn_up", 1, 0)


def test_a_tool_reads_what_was_run_as_one_json_object(model_pair, tmp_path):
    done = _orchlog("trace", "llama", model_pair.gguf, "--tokens", "1,2,3", "--n-predict", "2", "--json",
                    "--mode", "summary", "-o", tmp_path / "ref.jsonl")  # fmt: skip
    assert done.returncode == 0 and done.stderr == ""
    doc = json.loads(done.stdout)
    assert set(doc) == {"trace", "engine", "mode", "bytes", "seconds", "prompt", "decode", "text", "next", "llama_cpp"}
    assert (doc["trace"], doc["mode"], doc["prompt"], len(doc["decode"])) == (
        str(tmp_path / "ref.jsonl"),
        "summary",
        [1, 2, 3],
        2,
    )
    assert doc["bytes"] == (tmp_path / "ref.jsonl").stat().st_size
    assert all(isinstance(line, str) and "orchlog" in line for line in doc["next"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["llama", "/nonexistent.gguf", "--prompt", "x"], "/nonexistent.gguf: no such file"),
        (["hf", "/nonexistent", "--prompt", "x"], "not a transformers checkpoint directory"),
        (["llama", "m.gguf", "--tokens", "1,x"], "expected comma-separated token ids"),
        (["llama", "m.gguf"], "one of the arguments --prompt --tokens is required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path):
    done = _orchlog("trace", *args, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr


@pytest.mark.parametrize("engine", ["llama", "hf"])
def test_help_shows_an_example(engine):
    done = _orchlog("trace", engine, "--help")
    assert done.returncode == 0 and "example:" in done.stdout and "orchlog trace llama model.gguf" in done.stdout
