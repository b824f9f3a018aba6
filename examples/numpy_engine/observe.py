"""The single hook the NumPy engine calls at every stage of its forward pass,
and the stages it reports.

Names follow the graph of the pinned llama.cpp (qwen2), so that the engine's
records meet llama.cpp's without a name map: `checkpoint` is ggml's tensor
name without its `-<layer>` suffix; `stage` is set only where ggml reuses one
name for several ops, and is then that op in lower case (Qcur after `add` of
the bias, then after `rope`). The hook gets one token at a time: `array` is
that token's slice, `token_idx` its position, `step` 0 for the prompt pass
and then one per decode call.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

# (checkpoint, stage) in execution order: before the blocks (layer None), in
# every block (layer = block index), after the blocks (layer None).
BEFORE_BLOCKS = (("embd", None),)
PER_BLOCK = (
    ("attn_norm", None),
    ("Qcur", "add"),
    ("Kcur", "add"),
    ("Vcur", "add"),  # projections plus bias
    ("Qcur", "rope"),
    ("Kcur", "rope"),
    # Per token (n_head, n_kv): llama.cpp's rows span its padded cache (256
    # here) and this engine's the positions cached so far (compare them with
    # --window 'kq*'). kq is Q.K before scaling and masking; kq_soft_max is 0 where masked.
    ("kq", None),
    ("kq_soft_max", None),
    ("kqv_out", None),  # attention output, heads concatenated, before o_proj
    # o_proj's output: llama.cpp leaves this tensor unnamed (`node_<n>`, the
    # MUL_MAT right after kqv_out); orchlog's ggml adapter logs it as attn_out.
    ("attn_out", None),
    ("ffn_inp", None),
    ("ffn_norm", None),
    ("ffn_gate", None),
    ("ffn_up", None),
    ("ffn_swiglu", None),
    ("ffn_out", None),
    ("l_out", None),
)
AFTER_BLOCKS = (("result_norm", None), ("result_output", None))


class Observer(Protocol):
    def __call__(
        self, checkpoint: str, layer: int | None, token_idx: int, step: int, array: np.ndarray, stage: str | None = None
    ) -> None: ...
