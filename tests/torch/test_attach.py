"""attach() on a small plain torch model: one record per token row with its position, step and layer;
outputs captured before later in-place work; inputs on request; hooks gone after the block."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import orchlog
import orchlog.torch

pytestmark = pytest.mark.slow  # imports torch


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.act = torch.nn.ReLU(inplace=True)  # overwrites proj's output in place

    def forward(self, x):
        return self.act(self.proj(x))


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(10, 4)
        self.layers = torch.nn.ModuleList([Block(), Block()])

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return x


def records(path):
    return list(orchlog.open_trace(path))


def test_each_output_is_one_record_per_token_with_position_step_and_layer(trace):
    model = Tiny()
    with orchlog.torch.attach(model, ["embed", "layers.*.proj"]) as hooks:
        model(torch.tensor([[1, 2, 3]]))
        model(torch.tensor([[4]]))
    assert hooks.paths == ["embed", "layers.0.proj", "layers.1.proj"]
    got = [(r.checkpoint, r.layer, r.step, r.token_idx, r.shape) for r in records(trace)]
    step0 = [
        (name, layer, 0, t, (4,))
        for name, layer in (("embed", None), ("layers.0.proj", 0), ("layers.1.proj", 1))
        for t in range(3)
    ]
    step1 = [("embed", None, 1, 3, (4,)), ("layers.0.proj", 0, 1, 3, (4,)), ("layers.1.proj", 1, 1, 3, (4,))]
    assert got == step0 + step1
    assert hooks.records == len(got)


def test_an_output_is_captured_before_a_later_in_place_kernel_changes_it(trace):
    model = Tiny()
    seen: dict[str, torch.Tensor] = {}
    proj = model.layers[0].proj
    assert isinstance(proj, torch.nn.Module)
    proj.register_forward_hook(lambda m, a, out: seen.update(proj=out.detach().clone()))
    with orchlog.torch.attach(model, ["layers.0.proj"]):
        model(torch.tensor([[1, 2, 3]]))
    logged = np.stack([r.tensor() for r in records(trace)])
    np.testing.assert_array_equal(logged, seen["proj"][0].numpy())
    assert (logged < 0).any()  # the in-place ReLU did not reach the record


def test_inputs_are_logged_with_stage_input_on_request_also_of_modules_whose_outputs_are_not(trace):
    model = Tiny()
    with orchlog.torch.attach(model, ["layers.*.act"], inputs=["layers.1.*"]) as hooks:
        model(torch.tensor([[5, 6]]))
    assert hooks.paths == ["layers.0.act", "layers.1.proj", "layers.1.act"]
    got = [(r.checkpoint, r.stage, r.token_idx) for r in records(trace)]
    assert got == [
        ("layers.0.act", None, 0),
        ("layers.0.act", None, 1),
        ("layers.1.proj", "input", 0),
        ("layers.1.proj", "input", 1),
        ("layers.1.act", "input", 0),
        ("layers.1.act", "input", 1),
        ("layers.1.act", None, 0),
        ("layers.1.act", None, 1),
    ]


def test_positions_and_steps_can_be_given(trace):
    model = Tiny()
    with orchlog.torch.attach(model, ["embed"], step=5, positions=lambda args, kwargs: [10, 20]):
        model(torch.tensor([[1, 2]]))
    assert [(r.step, r.token_idx) for r in records(trace)] == [(5, 10), (5, 20)]


def test_an_unbatched_call_splits_along_the_first_axis(trace):
    model = Tiny()
    with orchlog.torch.attach(model, ["embed"]):
        model(torch.tensor([7, 8, 9]))
    assert [(r.token_idx, r.shape) for r in records(trace)] == [(0, (4,)), (1, (4,)), (2, (4,))]


def test_leaving_the_block_removes_every_hook(trace):
    model = Tiny()
    with orchlog.torch.attach(model):
        pass
    model(torch.tensor([[1]]))
    assert records(trace) == []
    assert not model._forward_pre_hooks and not model.embed._forward_hooks


def test_cache_layers_reads_the_cache_forms_and_returns_nothing_for_other_objects():
    from orchlog.torch.attach import cache_layers

    keys, values = torch.zeros(2), torch.ones(2)

    class OlderCache:  # transformers' Cache before `layers`
        key_cache, value_cache = [keys], [values]

    class KeysOnly:  # not a cache: a hook must not raise into the model on it
        key_cache = [keys]

    ((layer, k, v),) = cache_layers(OlderCache())
    assert layer == 0 and k is keys and v is values
    ((layer, k, v),) = cache_layers(((keys, values),))
    assert layer == 0 and k is keys and v is values
    assert cache_layers(KeysOnly()) == []
    assert cache_layers(None) == []
