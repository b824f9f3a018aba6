"""attach(): forward hooks on chosen modules that log through orchlog.log, removed on exit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import orchlog
from orchlog.torch.calls import CallCounter, PositionsFn, first_tensor
from orchlog.torch.paths import layer_of, matching
from orchlog.torch.rows import captured, token_rows

INPUT_STAGE = "input"
PROBS_STAGE = "probs"  # attention probabilities, per query token: [heads, keys]
CACHE = "past_key_values"  # the KV cache a forward call returns, stages "key" and "value"
ATTENTION_MODULES = ("**.self_attn",)


class Hooks:
    """The hooks attach() installed; a context manager that removes them on exit."""

    def __init__(self, model: torch.nn.Module, paths: list[str], calls: CallCounter, batch_index: int) -> None:
        self.model = model
        self.paths = paths  # the hooked modules, in model order
        self.calls = calls
        self.batch_index = batch_index
        self.records = 0  # written so far
        self._handles: list[torch.utils.hooks.RemovableHandle] = []

    @property
    def step(self) -> int | None:
        """The step of the forward call under way (or last made), None before the first."""
        return self.calls.current.step if self.calls.current else None

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def __enter__(self) -> Hooks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def _log(
        self, path: str, value: object, stage: str | None, token_axis: int | None = 1, layer: int | None = None
    ) -> None:
        call = self.calls.current
        tensor = captured(value)
        if call is None or tensor is None:
            return
        layer = layer_of(path) if layer is None else layer
        first = call.positions[0] if call.positions else 0
        rows = [(None, tensor)] if token_axis is None else token_rows(tensor, call, self.batch_index, token_axis)
        for position, row in rows:
            token_id = None if position is None else call.token_id(self.batch_index, position - first)
            self.records += orchlog.log(
                path, row, token_idx=position, layer=layer, stage=stage, step=call.step, token_id=token_id
            )

    def _log_probs(self, path: str, output: object) -> None:
        """The attention weights an attention module returns second: [batch, heads, queries, keys]."""
        if isinstance(output, (tuple, list)) and len(output) > 1 and isinstance(output[1], torch.Tensor):
            self._log(path, output[1], PROBS_STAGE, token_axis=2)

    def _log_cache(self, output: object) -> None:
        """Each layer's keys and values in the cache the model returned, as it holds them."""
        for layer, keys, values in cache_layers(getattr(output, "past_key_values", None)):
            self._log(CACHE, keys, "key", token_axis=None, layer=layer)
            self._log(CACHE, values, "value", token_axis=None, layer=layer)


def attach(
    model: torch.nn.Module,
    modules: Sequence[str] | None = None,
    *,
    inputs: bool | Sequence[str] = False,
    attention: bool | Sequence[str] = False,
    cache: bool = False,
    positions: PositionsFn | None = None,
    step: int = 0,
    batch_index: int = 0,
) -> Hooks:
    """Log the outputs of `model`'s submodules whose paths match the globs in `modules` (every submodule
    for None), and the first tensor input of those matching the globs in `inputs` (True: the same
    modules as `modules`).

    `attention` (True: `**.self_attn`) picks attention modules whose second output is their attention
    probabilities, [batch, heads, queries, keys] (HF's eager attention returns them): logged per query
    token as [heads, keys], stage "probs". `cache=True` logs the KV cache each forward call returns,
    layer by layer as HF holds it ([batch, kv_heads, positions, head_dim]): checkpoint
    "past_key_values", stages "key" and "value", no token.

    `step` is the step of the model's first forward call, counted up by one per call. `positions`
    (args, kwargs) -> positions of the call's tokens overrides how they are found. Of a batch,
    sequence `batch_index` is logged.
    """
    named = dict(model.named_modules())
    named.pop("", None)
    outputs = set(matching(named, modules))
    inputs_of = outputs if inputs is True else set(matching(named, inputs) if inputs else ())
    probs_of = set(matching(named, ATTENTION_MODULES if attention is True else attention or ()))
    hooks = Hooks(
        model,
        [p for p in named if p in outputs or p in inputs_of or p in probs_of],
        CallCounter(step, positions),
        batch_index,
    )

    def root_pre_hook(_module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        hooks.calls.start(args, kwargs)

    hooks._handles.append(model.register_forward_pre_hook(root_pre_hook, with_kwargs=True))
    if cache:
        hooks._handles.append(model.register_forward_hook(lambda _m, _args, output: hooks._log_cache(output)))
    for path in hooks.paths:
        module = named[path]
        if path in inputs_of:
            hooks._handles.append(
                module.register_forward_pre_hook(
                    lambda _m, args, kwargs, path=path: hooks._log(path, first_tensor(args, kwargs), INPUT_STAGE),
                    with_kwargs=True,
                )
            )
        if path in outputs:
            hooks._handles.append(
                module.register_forward_hook(lambda _m, _args, output, path=path: hooks._log(path, output, None))
            )
        if path in probs_of:
            hooks._handles.append(
                module.register_forward_hook(lambda _m, _args, output, path=path: hooks._log_probs(path, output))
            )
    return hooks


def cache_layers(cache: object) -> list[tuple[int, torch.Tensor, torch.Tensor]]:
    """(layer, keys, values) of a KV cache: transformers' Cache (`layers[i].keys`, or the older
    `key_cache[i]`) or the legacy tuple of (keys, values) pairs; [] for anything else."""
    if cache is None:
        return []
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(i, x.keys, x.values) for i, x in enumerate(layers) if getattr(x, "keys", None) is not None]
    if hasattr(cache, "key_cache") and hasattr(cache, "value_cache"):
        return list(zip(range(len(cache.key_cache)), cache.key_cache, cache.value_cache))
    if isinstance(cache, (tuple, list)):
        return [(i, kv[0], kv[1]) for i, kv in enumerate(cache) if isinstance(kv, (tuple, list)) and len(kv) >= 2]
    return []
