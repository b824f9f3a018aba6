"""A vLLM-style trace (fused QKV and gate/up projections, the post-attention norm fused with the residual
add, the residual stream kept apart) meets the NumPy engine's canonical trace through a map whose
derived checkpoints rebuild what the engine does not log: slices, an RMS norm with weights from files, a
sum."""

from __future__ import annotations

import pytest

from examples.hunt.traces import numpy_trace, vllm_style_trace
from examples.numpy_engine.bugs import Bug
from examples.numpy_engine.observe import AFTER_BLOCKS, BEFORE_BLOCKS, PER_BLOCK
from examples.numpy_engine.vllm_style import write_map
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO
from orchlog.compare import CompareOptions, compare

DERIVED = {("Qcur", "add"), ("Kcur", "add"), ("Vcur", "add"), ("ffn_gate", None), ("ffn_up", None)}
DERIVED |= {("ffn_norm", None), ("l_out", None)}
# Inside vLLM's attention backend: not logged.
NOT_LOGGED = {("Qcur", "rope"), ("Kcur", "rope"), ("kq", None), ("kq_soft_max", None)}


@pytest.fixture(scope="module")
def traces(tiny_gguf, tmp_path_factory):
    out = tmp_path_factory.mktemp("vllm")
    return out, numpy_trace(tiny_gguf, out / "reference.bin"), write_map(tiny_gguf, out)


def test_derived_checkpoints_rebuild_every_stage_the_engine_does_not_log(tiny_gguf, traces):
    out, reference, vllm_map = traces
    ours = vllm_style_trace(tiny_gguf, out / "vllm.bin")
    report = compare(reference, ours, CompareOptions(maps_b=[str(vllm_map)], detail=True, threshold=1e-5))
    assert report.status == "ok" and not report.malformed
    assert {u.key["checkpoint"] for u in report.unmatched_on("b")} == {"qkv", "gate_up"}  # the fused parts
    stages = {(p.checkpoint, p.stage) for p in report.findings.kept_pairs()}
    assert stages == {*BEFORE_BLOCKS, *PER_BLOCK, *AFTER_BLOCKS} - NOT_LOGGED
    derived = [p for p in report.findings.kept_pairs() if (p.checkpoint, p.stage) in DERIVED]
    assert len(derived) == len(DERIVED) * TINY.n_layer * DEFAULT_SCENARIO.n_positions
    assert all(p.alignment and (p.alignment.how[1] or "").startswith("derived: ") for p in derived)


@pytest.mark.parametrize(
    "bug, where",
    [(Bug.NO_QKV_BIAS, ("Qcur", 0, "add")), (Bug.EPS_FROM_WRONG_KEY, ("attn_norm", 0, None))],
    ids=lambda x: x.label if isinstance(x, Bug) else "",
)
def test_a_bug_is_located_at_its_stage_through_the_derived_checkpoints(tiny_gguf, traces, bug, where):
    out, reference, vllm_map = traces
    ours = vllm_style_trace(tiny_gguf, out / f"vllm-{bug.name.lower()}.bin", bugs=bug)
    report = compare(reference, ours, CompareOptions(maps_b=[str(vllm_map)], threshold=1e-4))
    assert report.status == "diverged" and report.diverging_token == 0
    assert report.first is not None
    assert (report.first.checkpoint, report.first.layer, report.first.stage) == where
