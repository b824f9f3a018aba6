"""attach(..., graft=True): a grafted module hands the reference's tensor on, and a graft report then
measures what the modules after it add."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import orchlog
import orchlog.torch
from orchlog.compare import CompareOptions
from orchlog.errors import OrchlogError
from orchlog.graft_report.result import graft_report
from tests.torch.test_attach import Tiny

pytestmark = pytest.mark.slow  # imports torch
IDS = torch.tensor([[1, 2, 3]])
MODULES = ["embed", "layers.*.proj", "layers.*"]


def _run(model, path, **graft):
    orchlog.configure(path=str(path), mode="full", team="torch", select="", **graft)
    try:
        with torch.no_grad(), orchlog.torch.attach(model, MODULES, graft=bool(graft)):
            return model(IDS).numpy().copy()
    finally:
        orchlog.close()


def _perturbed(layer: int) -> Tiny:
    model = Tiny()
    with torch.no_grad():
        proj = model.layers[layer].proj
        assert isinstance(proj, torch.nn.Linear)
        proj.weight.add_(0.01)
    return model


def test_grafting_a_layer_hands_the_reference_on_and_the_report_measures_what_follows(tmp_path):
    ref = tmp_path / "ref.bin"
    expected = _run(Tiny(), ref)
    # Layer 0 is wrong; its output grafted, layer 1 sees the reference's input and matches it bit for bit.
    got = _run(_perturbed(0), tmp_path / "g.bin", graft_from=str(ref), graft_select="checkpoint=layers.0")
    assert np.array_equal(got, expected)
    plain = _run(_perturbed(0), tmp_path / "plain.bin")
    assert not np.array_equal(plain, expected)
    report = graft_report(ref, [tmp_path / "g.bin"], tmp_path / "plain.bin", CompareOptions(threshold=1e-6))
    rows = {r.stage[1]: r for r in report.rows}
    assert rows["layers.0"].verdict == "grafted"
    assert rows["layers.1.proj"].local is not None
    assert rows["layers.1.proj"].verdict == "inherited" and rows["layers.1.proj"].local.measure.max_abs == 0
    assert rows["layers.0.proj"].verdict == "no_graft_before"


def test_a_bfloat16_module_gets_the_reference_rounded_to_bfloat16(tmp_path):
    ref = tmp_path / "ref.bin"
    _run(Tiny(), ref)
    model = _perturbed(0).to(torch.bfloat16)
    seen: dict[str, torch.Tensor] = {}
    model.layers[1].register_forward_pre_hook(lambda _m, args: seen.setdefault("x", args[0]))
    orchlog.configure(
        path=str(tmp_path / "g.bin"), mode="full", graft_from=str(ref), graft_select="checkpoint=layers.0"
    )
    try:
        with torch.no_grad(), orchlog.torch.attach(model, MODULES, graft=True):
            model(IDS)
    finally:
        orchlog.close()
    reference = {r.token_idx: r.tensor() for r in orchlog.open_trace(ref) if r.checkpoint == "layers.0"}
    assert seen["x"].dtype == torch.bfloat16
    for t in range(3):
        want = torch.tensor(np.asarray(reference[t], dtype=np.float32)).to(torch.bfloat16)
        assert torch.equal(seen["x"][0, t], want)


def test_a_graft_map_without_graft_is_a_clear_error():
    with pytest.raises(OrchlogError, match="graft=True"):
        orchlog.torch.attach(Tiny(), MODULES, graft_map="hf_qwen2")


def test_graft_from_on_attach_starts_the_grafting_run(tmp_path, monkeypatch):
    ref = tmp_path / "ref.bin"
    expected = _run(Tiny(), ref)
    monkeypatch.setattr(orchlog.emit.api, "_configured_graft", None)  # as in a program that never called configure
    monkeypatch.setenv("ORCH_LOG_FILE", str(tmp_path / "g.bin"))
    monkeypatch.setenv("ORCH_LOG_MODE", "full")
    model = _perturbed(0)
    try:
        with torch.no_grad(), orchlog.torch.attach(model, MODULES, graft_from=ref, graft_select="checkpoint=layers.0"):
            got = model(IDS).numpy().copy()
    finally:
        orchlog.close()
    assert np.array_equal(got, expected)
    grafted = [r for r in orchlog.open_trace(tmp_path / "g.bin") if r.grafted]
    assert {r.checkpoint for r in grafted} == {"layers.0"}


def test_graft_from_on_attach_after_configure_must_agree_with_it(tmp_path):
    orchlog.configure(path=str(tmp_path / "g.bin"), mode="full", graft_from=str(tmp_path / "ref.bin"))
    try:
        with pytest.raises(OrchlogError, match="give graft_from and graft_select to configure"):
            orchlog.torch.attach(Tiny(), MODULES, graft_from=tmp_path / "other.bin")
        orchlog.torch.attach(Tiny(), MODULES, graft_from=tmp_path / "ref.bin").remove()
    finally:
        orchlog.close()


def test_graft_select_without_graft_from_is_a_clear_error():
    with pytest.raises(OrchlogError, match="give graft_from too"):
        orchlog.torch.attach(Tiny(), MODULES, graft_select="layer=0")
