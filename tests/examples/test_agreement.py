"""The agreement report (`python -m examples.agreement`), whose figures the docs quote."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # builds llama.cpp (cached) and imports torch


def test_the_report_lists_every_pair_and_every_bug_and_agrees_on_the_top_token():
    from examples.agreement import report
    from examples.numpy_engine.bugs import ALL_BUGS
    from examples.qwen2_tiny.weights import DEFAULT_SEED

    text = report(DEFAULT_SEED)
    for label in ["HF vs llama.cpp", "NumPy vs llama.cpp", "NumPy vs HF"]:
        assert label in text
    for bug in ALL_BUGS:
        assert f"NumPy+{bug.label} vs llama.cpp" in text
    assert text.endswith("(llama.cpp, HF, NumPy): yes")
