"""examples/llama_cpp/log_graph.cpp, the ten-line adapter example: it traces a prompt pass."""

from __future__ import annotations

import subprocess

import pytest

import orchlog
from tests.native.host_processes import env

pytestmark = pytest.mark.slow  # builds llama.cpp (cached)


def test_the_ten_line_example_logs_the_prompt_pass_at_the_tokens_positions(tiny_gguf, llama_programs, tmp_path):
    program = llama_programs / "log_graph"
    knobs = env(ORCH_LOG_FILE=str(tmp_path / "graph.jsonl"), ORCH_LOG_SELECT="checkpoint=l_out")
    subprocess.run([str(program), str(tiny_gguf)], env=knobs, check=True, capture_output=True)
    records = list(orchlog.open_trace(tmp_path / "graph.jsonl"))
    # llama_batch_get_one asks for the last token's logits only, so the last layer computes
    # (and the adapter logs) that token's row alone, at its position.
    assert [(r.layer, r.token_idx, r.step) for r in records] == [(0, 0, 0), (0, 1, 0), (0, 2, 0), (0, 3, 0), (1, 3, 0)]
