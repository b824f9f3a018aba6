"""The single hook the NumPy engine calls at every stage of its forward pass.

Names follow llama.cpp's graph: `checkpoint` is ggml's tensor name without its
`-<layer>` suffix, `stage` the ggml op after which ggml names the tensor when
one name is reused (Qcur after `add` of the bias, then after `rope`). The hook
gets one token at a time: `array` is that token's slice, `token_idx` its
position, `step` 0 for the prompt pass and then one per decode call.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np


class Observer(Protocol):
    def __call__(self, checkpoint: str, layer: int | None, token_idx: int, step: int, array: np.ndarray,
                 stage: str | None = None) -> None: ...
