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


def token_rows(
    tensor: torch.Tensor, call: Call, batch_index: int = 0, token_axis: int = 1
) -> Iterator[tuple[int | None, torch.Tensor]]:
    """(position, row) per token: axis `token_axis` of a batched call's tensor (after the batch axis: 1),
    or the first one when the call had no batch, is the token axis when its length is the call's token
    count; otherwise the whole tensor is one record without a position. Attention weights, [batch,
    heads, queries, keys], have their tokens on axis 2."""
    for position, row in token_views(tensor, call, batch_index, token_axis):
        yield position, row.contiguous()


def token_views(
    tensor: torch.Tensor, call: Call, batch_index: int = 0, token_axis: int = 1
) -> Iterator[tuple[int | None, torch.Tensor]]:
    """token_rows' rows as views of `tensor`: writing into one writes into `tensor`."""
    n = len(call.positions)
    if call.batch is not None:
        if tensor.dim() <= token_axis or tensor.shape[0] != call.batch or tensor.shape[token_axis] != n:
            yield None, tensor
            return
        tensor, axis = tensor[batch_index], token_axis - 1
    elif tensor.dim() == 0 or tensor.dim() < token_axis or tensor.shape[max(token_axis - 1, 0)] != n:
        yield None, tensor
        return
    else:
        axis = max(token_axis - 1, 0)
    for position, k in zip(call.positions, range(n)):
        yield position, tensor.select(axis, k)
