"""attach(): forward hooks on chosen modules that log through orchlog.log, removed on exit."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from typing import Any

import torch

import orchlog
from orchlog.emit.api import graft_from_reference
from orchlog.errors import OrchlogError
from orchlog.maps.namemap import NameMap, load_maps
from orchlog.torch.calls import CallCounter, PositionsFn, first_tensor
from orchlog.torch.graft import first_tensor_of, graft_rows
from orchlog.torch.paths import layer_of, matching
from orchlog.torch.rows import captured, token_rows

INPUT_STAGE = "input"
PROBS_STAGE = "probs"  # attention probabilities, per query token: [heads, keys]
CACHE = "past_key_values"  # the KV cache a forward call returns, stages "key" and "value"
ATTENTION_MODULES = ("**.self_attn",)


class Hooks:
    """The hooks attach() installed; a context manager that removes them on exit."""

    def __init__(
        self,
        model: torch.nn.Module,
        paths: list[str],
        calls: CallCounter,
        batch_index: int,
        graft_names: NameMap | None = None,
        grafting: bool = False,
        names: NameMap | None = None,
    ) -> None:
        self.model = model
        self.paths = paths  # the hooked modules, in model order
        self.calls = calls
        self.batch_index = batch_index
        self.records = 0  # written so far
        self.grafting = grafting  # outputs and inputs go through orchlog.graft, which logs them too
        self.graft_names = graft_names  # module paths -> the reference's names, for graft calls
        self.names = names  # module paths -> the names the records carry (None: the paths themselves)
        self._windows = names.windows if names is not None else ()
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
        checkpoint = path
        mapped = self.names.lookup(path, stage) if self.names is not None else None
        if mapped is not None:
            checkpoint, layer, stage = (
                mapped.checkpoint,
                mapped.layer if mapped.layer is not None else layer,
                mapped.stage,
            )
        causal = token_axis is not None and any(fnmatch.fnmatchcase(checkpoint, glob) for glob in self._windows)
        first = call.positions[0] if call.positions else 0
        rows = [(None, tensor)] if token_axis is None else token_rows(tensor, call, self.batch_index, token_axis)
        for position, row in rows:
            token_id = None if position is None else call.token_id(self.batch_index, position - first)
            if causal and position is not None and row.dim() >= 1:
                # The keys this token may attend to, positions 0 to its own: how the ggml adapter cuts
                # llama.cpp's rows, so that the two compare with no window.
                row = row[..., : position + 1].contiguous()
            self.records += orchlog.log(
                checkpoint, row, token_idx=position, layer=layer, stage=stage, step=call.step, token_id=token_id
            )

    def _reference_key(self, path: str, stage: str | None) -> tuple[str, int | None, str | None]:
        mapped = self.graft_names.lookup(path, stage) if self.graft_names is not None else None
        if mapped is None:
            return path, layer_of(path), stage
        return mapped.checkpoint, mapped.layer, mapped.stage

    def _graft(self, path: str, value: Any, stage: str | None) -> Any:
        """The module's output (or input) with its tensor's rows grafted where orchlog.graft selects them;
        None when nothing was grafted (the hook then changes nothing)."""
        call = self.calls.current
        tensor, replace = first_tensor_of(value)
        if call is None or tensor is None:
            return None
        checkpoint, layer, stage = self._reference_key(path, stage)
        new, written = graft_rows(tensor, call, checkpoint, layer, stage, self.batch_index)
        self.records += written
        return None if new is None else replace(new)

    def _output(self, path: str, output: Any) -> Any:
        if not self.grafting:
            self._log(path, output, None)
            return None
        return self._graft(path, output, None)

    def _input(self, path: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not self.grafting:
            self._log(path, first_tensor(args, kwargs), INPUT_STAGE)
            return None
        if first_tensor_of(args)[0] is not None:
            new_args = self._graft(path, args, INPUT_STAGE)
            return None if new_args is None else (new_args, kwargs)
        new_kwargs = self._graft(path, dict(kwargs), INPUT_STAGE)
        return None if new_kwargs is None else (args, new_kwargs)

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
    graft: bool = False,
    graft_from: str | os.PathLike[str] | None = None,
    graft_select: str | None = None,
    graft_map: str | None = None,
    names: str | None = None,
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

    `graft=True` turns the hooked outputs and inputs into graft points under the run's graft knobs
    (orchlog.configure's graft_from, the reference's full trace, and graft_select, over the reference's
    names; or ORCH_GRAFT_FROM and ORCH_GRAFT_SELECT): each token's row goes through orchlog.graft, which
    replaces it with the reference's where the selector selects it and logs it either way; the module
    then returns (or is called with) the grafted tensor, on its device and in its dtype. `graft_map` (a
    name map, e.g. "hf_qwen2") turns module paths into the reference's names for the graft calls, and
    the records carry those names. `graft_from` (the reference's full trace) and `graft_select` imply
    graft=True and start the run with them when the program has not called orchlog.configure (every
    other setting from its env knob); after configure, give them to configure instead. See docs/graft.md.

    `names` (a name map, e.g. "hf_qwen2") makes the records carry the map's names: each logged path the
    map names is written under its canonical checkpoint, layer and stage, and the rows of a target marked
    `window = true` (the attention probabilities) are cut to the keys the token may attend to, positions
    0 to its own, as the ggml adapter cuts llama.cpp's; the trace then compares with llama.cpp's with no
    options (what `orchlog trace hf` writes).
    """
    if graft_select is not None and graft_from is None:
        raise OrchlogError("graft_select chooses what attach(..., graft_from=REF) grafts; give graft_from too")
    if graft_from is not None:
        graft_from_reference(os.fspath(graft_from), graft_select)
        graft = True
    if graft_map is not None and not graft:
        raise OrchlogError("graft_map names the graft calls of attach(..., graft=True); give graft=True too")
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
        load_maps([graft_map]) if graft_map else None,
        grafting=graft,
        names=load_maps([names]) if names else None,
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
                    lambda _m, args, kwargs, path=path: hooks._input(path, args, kwargs), with_kwargs=True
                )
            )
        if path in outputs:
            hooks._handles.append(
                module.register_forward_hook(lambda _m, _args, output, path=path: hooks._output(path, output))
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
