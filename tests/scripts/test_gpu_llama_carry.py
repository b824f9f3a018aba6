"""scripts/gpu_llama_carry.py --check on graft runs made here with the pinned CPU build: the run that
grafted one row from a reference passes, one without the graft does not."""

from __future__ import annotations

import shutil

import pytest

from examples.qwen2_tiny.weights import DEFAULT_SEED
from orchlog.llama.driver import build_driver, pinned_llama_cpp
from tests.scripts.script_modules import import_script

pytestmark = pytest.mark.slow  # builds llama.cpp (cached) and runs it


@pytest.fixture(scope="module")
def carry_module():
    return import_script("gpu_llama_carry")


@pytest.fixture(scope="module")
def runs(carry_module, tmp_path_factory):
    """A carry whose reference comes from other weights than the runs under test, so that the grafted row
    differs from the run's own, and the plain and grafted runs of the model under test."""
    from examples.qwen2_tiny.make_model import make_tiny_model

    carry, out = tmp_path_factory.mktemp("carry"), tmp_path_factory.mktemp("out")
    program = build_driver(pinned_llama_cpp(2, quiet=True))
    other = make_tiny_model(carry / "model.gguf", seed=DEFAULT_SEED + 1)
    carry_module.run_tokens(program, other, carry / "cpu-full.bin", carry / "cpu-logits.npy")
    model = make_tiny_model(out / "model.gguf")
    carry_module.run_tokens(program, model, out / "gpu-full.bin", out / "full.npy")
    knobs = {"ORCH_GRAFT_FROM": str(carry / "cpu-full.bin"), "ORCH_GRAFT_SELECT": carry_module.GRAFT_SELECT}
    carry_module.run_tokens(program, model, out / "gpu-graft.bin", out / "graft.npy", **knobs)
    return carry, out


def test_a_run_that_grafted_the_selected_row_passes_and_says_what_moved(carry_module, runs):
    lines = carry_module.check_graft(*runs)
    assert not [line for line in lines if line.startswith("FAIL")], lines
    assert "ok   it holds the CPU reference's row bit for bit" in lines
    assert "info the GPU's own row differs from the CPU's" in lines
    moved = [line for line in lines if "later records of token 3 moved" in line]
    assert len(moved) == 1 and not moved[0].startswith("info 0 of"), lines


def test_a_run_without_the_graft_fails(carry_module, runs, tmp_path):
    carry, out = runs
    shutil.copy(out / "gpu-full.bin", tmp_path / "gpu-full.bin")
    shutil.copy(out / "gpu-full.bin", tmp_path / "gpu-graft.bin")
    assert carry_module.check_graft(carry, tmp_path) == ["FAIL the graft run holds 0 grafted records, not 1"]
