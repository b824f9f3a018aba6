"""Splitting a module's tensor into one row per token, the way every orchlog adapter records them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from orchlog.torch.calls import Call


def captured(value: Any) -> torch.Tensor | None:
    """The tensor a module produced (the first one in a tuple, list or dict), detached and copied to the
    CPU: later in-place work on the original cannot reach it."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        value = next((v for v in value if isinstance(v, torch.Tensor)), None)
    if not isinstance(value, torch.Tensor):
        return None
    return value.detach().to("cpu", copy=True)


def token_rows(tensor: torch.Tensor, call: Call, batch_index: int = 0) -> Iterator[tuple[int | None, torch.Tensor]]:
    """(position, row) per token: the axis after the batch axis, or the first one when the call had no
    batch, is the token axis when its length is the call's token count; otherwise the whole tensor is one
    record without a position."""
    n = len(call.positions)
    if call.batch is not None and tensor.dim() >= 2 and tensor.shape[0] == call.batch and tensor.shape[1] == n:
        tensor = tensor[batch_index]
    elif call.batch is not None or tensor.dim() == 0 or tensor.shape[0] != n:
        yield None, tensor
        return
    for position, row in zip(call.positions, tensor):
        yield position, row.contiguous()
