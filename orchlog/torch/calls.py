"""One forward call of the model: its step, its batch, and the position of each token.

The model's own forward call is watched by a pre-hook on the root module,
which runs before any submodule's hook; the tokens are read from its inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from orchlog.records import record

PositionsFn = Callable[[tuple[Any, ...], dict[str, Any]], Sequence[int]]


@record
class Call:
    step: int
    positions: list[int]  # of the call's tokens, in order
    batch: int | None  # batch size, None when the inputs have no batch dimension
    token_ids: list[list[int]] | None = None  # per sequence of the batch, when the call was given input_ids

    def token_id(self, batch_index: int, row: int) -> int | None:
        """The token id of a row of sequence `batch_index`, when known."""
        if self.token_ids is None or batch_index >= len(self.token_ids) or row >= len(self.token_ids[batch_index]):
            return None
        return self.token_ids[batch_index][row]


def first_tensor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor | None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value
    return None


def _tokens_and_batch(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int | None]:
    """Token ids are (batch, tokens) or (tokens,); embeddings (batch, tokens, hidden) or (tokens, hidden)."""
    x = kwargs.get("input_ids")
    if x is None:
        x = kwargs.get("inputs_embeds")
    if x is None:
        x = first_tensor(args, kwargs)
    if x is None or x.dim() == 0:
        return 0, None
    token_axis = -2 if x.is_floating_point() else -1
    if x.dim() < -token_axis:
        return 0, None
    batched = x.dim() > -token_axis
    return int(x.shape[token_axis]), int(x.shape[0]) if batched else None


def _token_ids(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[list[int]] | None:
    """input_ids as lists per sequence: (batch, tokens) or (tokens,)."""
    x = kwargs.get("input_ids")
    if x is None and args and isinstance(args[0], torch.Tensor) and not args[0].is_floating_point():
        x = args[0]
    if not isinstance(x, torch.Tensor) or x.is_floating_point() or x.dim() not in (1, 2):
        return None
    ids = x.detach().to("cpu").tolist()
    return ids if x.dim() == 2 else [ids]


def _given_positions(kwargs: dict[str, Any]) -> list[int] | None:
    """position_ids (batch, tokens) or cache_position (tokens,), when the caller passed them."""
    for name in ("position_ids", "cache_position"):
        value = kwargs.get(name)
        if isinstance(value, torch.Tensor):
            return [int(p) for p in value.reshape(-1, value.shape[-1])[0].tolist()]
    return None


def _cached_length(kwargs: dict[str, Any]) -> int | None:
    cache = kwargs.get("past_key_values")
    length = getattr(cache, "get_seq_length", None)
    return int(length()) if callable(length) else None


class CallCounter:
    """Counts the model's forward calls and works out each one's token positions.

    Positions come from `positions(args, kwargs)` when given; else from the
    call's position_ids or cache_position; else after the length of the KV
    cache passed in (past_key_values); else they continue from the last call.
    """

    def __init__(self, first_step: int = 0, positions: PositionsFn | None = None) -> None:
        self.next_step = first_step
        self.next_position = 0
        self.positions_fn = positions
        self.current: Call | None = None

    def start(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call:
        n_tokens, batch = _tokens_and_batch(args, kwargs)
        positions: list[int] | None
        if self.positions_fn is not None:
            positions = [int(p) for p in self.positions_fn(args, kwargs)]
        else:
            positions = _given_positions(kwargs)
            if positions is None:
                cached = _cached_length(kwargs)
                start = self.next_position if cached is None else cached
                positions = list(range(start, start + n_tokens))
        self.current = Call(self.next_step, positions, batch, _token_ids(args, kwargs))
        self.next_step += 1
        self.next_position = positions[-1] + 1 if positions else self.next_position
        return self.current
