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
