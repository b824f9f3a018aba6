"""Where each NumPy engine bug first shows in the quantized hunt's model, and which bugs a quantized
reference's own noise hides: what the end-to-end test and benchmarks/noisy_reference.py check a verdict
against."""

from __future__ import annotations

from examples.numpy_engine.bugs import Bug
from examples.quantized.config import QWEN2_05B_WIDTHS
from orchlog.compare.pairview import PairView

LAST_LAYER = QWEN2_05B_WIDTHS.n_layer - 1

# (step, token_idx, layer, checkpoint, stage) of each bug's first effect, as the engine shows it against
# itself clean (tests/examples/numpy_engine/test_engine_bugs.py holds the same places on the tiny model).
WHERE = {
    Bug.TRANSPOSED_EMBEDDING: (0, 0, None, "embd", None),
    Bug.NO_QKV_BIAS: (0, 0, 0, "Qcur", "add"),
    Bug.ROPE_K_PER_Q_HEAD: (0, 1, 0, "Kcur", "rope"),
    Bug.NORM_WEIGHT_TWICE: (0, 0, 0, "ffn_norm", None),
    Bug.SKIPPED_ATTN_RESIDUAL: (0, 0, 0, "ffn_inp", None),
    Bug.DECODE_POSITION_OFF_BY_ONE: (1, 8, 0, "Qcur", "rope"),
    Bug.LAST_LAYER_NO_V_BIAS: (0, 0, LAST_LAYER, "Vcur", "add"),
    Bug.ATTN_NORM_WITHOUT_WEIGHT: (0, 0, 0, "attn_norm", None),
    Bug.SWAPPED_SWIGLU: (0, 0, 0, "ffn_swiglu", None),
    Bug.ROPE_ADJACENT_PAIRS: (0, 1, 0, "Qcur", "rope"),
    Bug.KQ_UNSCALED: (0, 1, 0, "kq_soft_max", None),
    Bug.EPS_HARD_CODED: (0, 0, 0, "attn_norm", None),
}
# Smaller than a Q8_0 reference's noise at every stage (an epsilon of 0 for 1e-6, a bf16 round of one
# stage's output): to such a reference, a correct engine.
WITHIN_NOISE = (Bug.EPS_FROM_WRONG_KEY, Bug.BF16_FFN_OUT)


def where(pair: PairView) -> tuple[int | None, int | None, int | None, str, str | None]:
    """A PairView's place in WHERE's terms."""
    return (pair.step, pair.token_idx, pair.layer, pair.checkpoint, pair.stage)
