"""`orchlog compare` says how the two runs' headers differ before its verdict, in text, Markdown and JSON."""

from __future__ import annotations

import numpy as np

import orchlog
from orchlog.compare import compare
from orchlog.report import render_markdown, render_text


def _trace(path, config):
    assert orchlog.configure(path=str(path), team="t", select="", config=config)
    orchlog.log("l_out", np.arange(8, dtype=np.float32), 0, 0)
    orchlog.close()
    return path


def test_a_quantized_reference_and_another_prompt_are_said_before_the_verdict(tmp_path):
    a = _trace(tmp_path / "a.jsonl", {"model.weights": "q8_0", "prompt.tokens": "1,2,3", "engine": "llama.cpp"})
    b = _trace(tmp_path / "b.jsonl", {"model.weights": "f32", "prompt.tokens": "1,2,3", "engine": "mine"})
    report = compare(str(a), str(b))
    text = render_text(report)
    assert "RUNS DIFFER: the reference ran q8_0 weights, ours f32" in text
    assert text.index("RUNS DIFFER") < text.index("RESULT:")
    assert "prompt.tokens" not in text and "engine" not in text
    assert report.to_json()["run_differences"] == [
        {"key": "model.weights", "reference": "q8_0", "ours": "f32", "text": "the reference ran q8_0 weights, ours f32"}
    ]
    assert "**Runs differ:** the reference ran q8_0 weights, ours f32" in render_markdown(report)


def test_runs_that_agree_on_what_made_them_say_nothing_of_it(tmp_path):
    a = _trace(tmp_path / "a.jsonl", {"model.weights": "f32"})
    b = _trace(tmp_path / "b.jsonl", {"model.weights": "f32"})
    report = compare(str(a), str(b))
    assert "RUNS DIFFER" not in render_text(report) and report.to_json()["run_differences"] == []
