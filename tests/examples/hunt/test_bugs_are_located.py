"""Each bug injected into the NumPy engine is located by `orchlog compare --format json` against
llama.cpp (traced through the ggml adapter): the first diverging token, then the stage and layer
where the real incident broke."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from examples.hunt.run import prepare
from examples.numpy_engine.bugs import Bug
from examples.qwen2_tiny.config import TINY

pytestmark = pytest.mark.slow  # builds llama.cpp (cached)

# (token_idx, checkpoint, layer, stage) of the first divergence.
WHERE = {
    Bug.TRANSPOSED_EMBEDDING: (0, "embd", None, None),
    Bug.NO_QKV_BIAS: (0, "Qcur", 0, "add"),
    # RoPE at position 0 rotates by nothing, so every record of token 0 agrees.
    Bug.ROPE_K_PER_Q_HEAD: (1, "Kcur", 0, "rope"),
    Bug.EPS_FROM_WRONG_KEY: (0, "attn_norm", 0, None),
}


def orchlog_compare_json(hunt) -> tuple[int, dict]:
    cmd = [sys.executable, "-m", "orchlog", "compare", *hunt.arguments(), "--format", "json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize("bug", list(WHERE), ids=lambda b: b.name.lower())
def test_orchlog_compare_names_the_bugs_first_token_stage_and_layer(hunt_dir, bug):
    exit_code, report = orchlog_compare_json(prepare(hunt_dir, bugs=bug))
    assert (exit_code, report["status"]) == (1, "diverged")
    first = report["first_divergence"]
    assert (first["token_idx"], first["checkpoint"], first["layer"], first["stage"]) == WHERE[bug]
    assert first["decided_by"] == "logits"


def test_the_clean_numpy_engine_agrees_with_llama_cpp(hunt_dir):
    exit_code, report = orchlog_compare_json(prepare(hunt_dir))
    assert (exit_code, report["status"], report["first_divergence"]) == (0, "ok", None)


def _compare_json(*args) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "orchlog", "compare", *map(str, args), "--format", "json", "--detail"],
        capture_output=True,
        text=True,
    )
    return proc.returncode, json.loads(proc.stdout)


def test_the_attention_rows_agree_as_logged_cut_to_each_tokens_causal_window(hunt_dir):
    # The adapter cuts llama.cpp's rows (its KV cache padded to 256 cells) to the cells each token attends
    # to, as the NumPy engine logs them: no window is needed, and summaries compare them too.
    hunt = prepare(hunt_dir)
    exit_code, report = _compare_json(hunt.reference, hunt.ours, "--threshold", "1e-4")
    attention = [p for p in report["pairs"] if p["checkpoint"] in ("kq", "kq_soft_max")]
    assert exit_code == 0 and len(attention) == 2 * 2 * 11  # two stages, two layers, eleven tokens
    assert all(p["alignment"] is None for p in attention)
    assert {tuple(p["shapes"]["a"]) for p in attention if p["token_idx"] == 5} == {(TINY.n_head, 6)}
