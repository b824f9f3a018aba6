"""Replacing a module's output (or input) with the reference's, row by row, through orchlog.graft.

orchlog.graft overwrites a writable NumPy array in place. A module's tensor
may live on a GPU, in bfloat16, inside a tuple or a model output: it is
copied to the host (bfloat16 by way of float32, which NumPy lacks), each
token's row is offered to orchlog.graft under the reference's key, and, when
any row was grafted, the tensor is copied back to its device and dtype and
put where the module's tensor was. The module's own tensor is never written
in place: what autograd or a cache holds of it stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

import orchlog
from orchlog.torch.calls import Call
from orchlog.torch.rows import token_views

# (checkpoint, stage) the run logs -> the reference's (checkpoint, layer, stage), or None to keep them.
KeyFn = Callable[[str, str | None], tuple[str, int | None, str | None] | None]
_NUMPY_DTYPES = (torch.float32, torch.float64, torch.float16)


def first_tensor_of(value: Any) -> tuple[torch.Tensor | None, Callable[[torch.Tensor], Any]]:
    """The first tensor in a module's output (a tensor, tuple, list or dict, as `captured` finds it) and a
    function that returns the output with that tensor replaced."""
    if isinstance(value, torch.Tensor):
        return value, lambda new: new
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            if isinstance(v, torch.Tensor):
                return v, lambda new, i=i: type(value)([new if k == i else x for k, x in enumerate(value)])
    if isinstance(value, dict):
        for key, v in value.items():
            if isinstance(v, torch.Tensor):

                def replace(new: torch.Tensor, key: Any = key) -> Any:
                    value[key] = new
                    return value

                return v, replace
    return None, lambda new: value


def graft_rows(
    tensor: torch.Tensor,
    call: Call,
    checkpoint: str,
    layer: int | None,
    stage: str | None,
    batch_index: int = 0,
    token_axis: int = 1,
) -> tuple[torch.Tensor | None, int]:
    """Offers each token row of `tensor` to orchlog.graft (which logs it, grafted or not); returns the
    tensor with the grafted rows replaced, on its device and in its dtype (None when none was grafted),
    and the number of records written."""
    host = tensor.detach().to("cpu", copy=True)
    staged = host if host.dtype in _NUMPY_DTYPES else host.to(torch.float32)
    grafted, written = False, 0
    first = call.positions[0] if call.positions else 0
    for position, row in token_views(staged, call, batch_index, token_axis):
        array = row.contiguous().numpy().copy()  # orchlog.graft wants it writable and C-contiguous
        token_id = None if position is None else call.token_id(batch_index, position - first)
        if orchlog.graft(
            checkpoint, array, token_idx=position, layer=layer, stage=stage, step=call.step, token_id=token_id
        ):
            row.copy_(torch.from_numpy(array))
            grafted = True
        written += 1
    if not grafted:
        return None, written
    return staged.to(device=tensor.device, dtype=tensor.dtype), written
