"""Each bug injected into the NumPy engine gets its signature at its first divergence against llama.cpp,
and no wrong one; on the clean engine pairs (NumPy and HF transformers against llama.cpp) no signature is
claimed on any pair, even with a threshold that fails every pair differing by float noise."""

from __future__ import annotations

import numpy as np
import pytest

from examples.hunt.run import prepare
from examples.numpy_engine.bugs import Bug
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.gguf_file import read_gguf_tensors
from orchlog.compare import LOGITS_NAMES, compare
from orchlog.diagnose.run import Walked, diagnose_targets, target_of
from orchlog.maps.namemap import load_maps
from orchlog.read.paths import open_trace
from orchlog.strings import glob_matcher

pytestmark = pytest.mark.slow  # builds llama.cpp (cached); the HF pair imports torch

# (token_idx, checkpoint, layer, stage) of the first divergence, the signature expected there, and any
# other signature that describes the bug rightly too.
EXPECTED = {
    Bug.TRANSPOSED_EMBEDDING: ((0, "embd", None, None), "transpose", set()),
    # llama.cpp logs Qcur before its bias add: ours equals that, and differs from ref by the bias.
    Bug.NO_QKV_BIAS: ((0, "Qcur", 0, "add"), "offset", {"equals_other_checkpoint"}),
    Bug.ROPE_K_PER_Q_HEAD: ((1, "Kcur", 0, "rope"), "rotation_within_heads", set()),
    Bug.EPS_FROM_WRONG_KEY: ((0, "attn_norm", 0, None), "per_token_scale", set()),
    Bug.NORM_WEIGHT_TWICE: ((0, "ffn_norm", 0, None), "per_channel_scale", set()),
    Bug.SKIPPED_ATTN_RESIDUAL: ((0, "ffn_inp", 0, None), "equals_other_checkpoint", set()),
    Bug.BF16_FFN_OUT: ((0, "ffn_out", 0, None), "precision", set()),
    Bug.DECODE_POSITION_OFF_BY_ONE: ((8, "Qcur", 0, "rope"), "rotation_within_heads", set()),
    # The last layer's V without its bias: ours equals llama.cpp's Vcur before the bias add.
    Bug.LAST_LAYER_NO_V_BIAS: ((0, "Vcur", TINY.n_layer - 1, "add"), "offset", {"equals_other_checkpoint"}),
}


def _diagnosed(hunt_dir, bug):
    hunt = prepare(hunt_dir, bugs=bug)
    report = compare(hunt.reference, hunt.ours, hunt.options())
    first = report.first
    assert first is not None
    where = (first.token_idx, first.checkpoint, first.layer, first.stage)
    (diagnosis,) = report.diagnosis
    return where, diagnosis, {f.kind: f for f in diagnosis.findings}


@pytest.mark.parametrize("bug", list(EXPECTED), ids=lambda b: b.name.lower())
def test_the_first_divergence_gets_its_signature_and_no_wrong_one(hunt_dir, bug):
    where, diagnosis, found = _diagnosed(hunt_dir, bug)
    place, kind, also = EXPECTED[bug]
    assert where == place
    assert diagnosis.basis == "tensors" and diagnosis.locality.verdict in ("introduced", "undecided")
    assert kind in found and set(found) <= {kind} | also, [f.message for f in diagnosis.findings]
    assert found[kind].confidence >= 0.9


def test_the_evidence_names_the_cause_in_numbers(hunt_dir):
    _, _, eps = _diagnosed(hunt_dir, Bug.EPS_FROM_WRONG_KEY)
    assert eps["per_token_scale"].evidence["epsilon_difference"] == pytest.approx(1e-6, rel=0.01)  # Qwen2's epsilon
    _, _, twice = _diagnosed(hunt_dir, Bug.ROPE_K_PER_Q_HEAD)
    rope = twice["rotation_within_heads"].evidence
    assert rope["extra_positions"] == rope["at_tokens"] and rope["pairing"] == "neox"
    _, _, decode = _diagnosed(hunt_dir, Bug.DECODE_POSITION_OFF_BY_ONE)
    assert set(decode["rotation_within_heads"].evidence["extra_positions"]) == {-1}
    _, _, residual = _diagnosed(hunt_dir, Bug.SKIPPED_ATTN_RESIDUAL)
    assert residual["equals_other_checkpoint"].evidence["checkpoint"] == "attn_out"
    _, _, norm = _diagnosed(hunt_dir, Bug.NORM_WEIGHT_TWICE)
    weight = read_gguf_tensors(hunt_dir / "tiny-qwen2.gguf")["blk.0.ffn_norm.weight"]
    leading = norm["per_channel_scale"].evidence["leading_factors"]
    assert np.allclose(leading, weight[: len(leading)], rtol=1e-4)  # ours / ref = the weight applied again
    _, _, no_v_bias = _diagnosed(hunt_dir, Bug.LAST_LAYER_NO_V_BIAS)
    bias = read_gguf_tensors(hunt_dir / "tiny-qwen2.gguf")[f"blk.{TINY.n_layer - 1}.attn_v.bias"]
    offset = no_v_bias["offset"].evidence["leading"]
    assert np.allclose(offset, -bias[: len(offset)], atol=1e-5)  # ours - ref = the bias left out
    _, _, bf16 = _diagnosed(hunt_dir, Bug.BF16_FFN_OUT)
    assert bf16["precision"].evidence["format"] == "bf16"


@pytest.mark.parametrize("engine", ["numpy", "hf"])
def test_no_signature_is_claimed_on_a_clean_engine_pair(hunt_dir, engine):
    hunt = prepare(hunt_dir, engine)
    report = compare(hunt.reference, hunt.ours, hunt.options(threshold=1e-9, detail=True, diagnose=False))
    differing = [v for v in report.findings.kept_pairs() if v.failed]
    assert len(differing) > 100  # float noise at most places
    targets = [("worst", target_of(v)) for v in differing]
    diagnoses = diagnose_targets(
        open_trace(hunt.reference),
        open_trace(hunt.ours),
        targets,
        Walked(report.key, load_maps(hunt.maps).apply, glob_matcher(LOGITS_NAMES)),
    )
    assert all(d.ran for d in diagnoses)
    assert [(d.where.label(), f.kind, f.message) for d in diagnoses for f in d.findings] == []
