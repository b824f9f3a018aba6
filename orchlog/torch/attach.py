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

    def _log(self, path: str, value: object, stage: str | None) -> None:
        call = self.calls.current
        tensor = captured(value)
        if call is None or tensor is None:
            return
        layer = layer_of(path)
        for position, row in token_rows(tensor, call, self.batch_index):
            self.records += orchlog.log(path, row, token_idx=position, layer=layer, stage=stage, step=call.step)


def attach(
    model: torch.nn.Module,
    modules: Sequence[str] | None = None,
    *,
    inputs: bool | Sequence[str] = False,
    positions: PositionsFn | None = None,
    step: int = 0,
    batch_index: int = 0,
) -> Hooks:
    """Log the outputs of `model`'s submodules whose paths match the globs in `modules` (every submodule
    for None), and the first tensor input of those matching the globs in `inputs` (True: the same
    modules as `modules`).

    `step` is the step of the model's first forward call, counted up by one per call. `positions`
    (args, kwargs) -> positions of the call's tokens overrides how they are found. Of a batch,
    sequence `batch_index` is logged.
    """
    named = dict(model.named_modules())
    named.pop("", None)
    outputs = set(matching(named, modules))
    inputs_of = outputs if inputs is True else set(matching(named, inputs) if inputs else ())
    hooks = Hooks(
        model, [p for p in named if p in outputs or p in inputs_of], CallCounter(step, positions), batch_index
    )

    def root_pre_hook(_module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        hooks.calls.start(args, kwargs)

    hooks._handles.append(model.register_forward_pre_hook(root_pre_hook, with_kwargs=True))
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
    return hooks
