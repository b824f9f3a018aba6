"""msprobe's dump.json: statistics per module call, whole tensors from dump_tensor_data beside it."""

from __future__ import annotations

import json
import shutil

import numpy as np
import torch

from orchlog import open_trace
from tests.read.formats.tools.conftest import compare_exit


def _dump_json(root):
    return next(root.glob("step0/rank0/dump.json"))


def test_module_entries_become_records_with_msprobes_statistics_and_crc(tools):
    path = _dump_json(tools / "msprobe-statistics-clean")
    doc = json.loads(path.read_text())
    trace = open_trace(path)
    records = list(trace)
    assert trace.header is not None
    assert trace.header["tool"] == "msprobe" and trace.header["config"]["task"] == "statistics"
    entry = doc["data"]["Module.model.layers.1.mlp.down_proj.Linear.forward.0"]
    out = next(r for r in records if r.checkpoint == "model.layers.1.mlp.down_proj" and r.stage is None)
    weight = next(r for r in records if r.checkpoint == "model.layers.1.mlp.down_proj" and r.stage == "param.weight")
    assert (out.layer, out.step, out.rank, out.shape) == (1, 0, 0, tuple(entry["output"][0]["shape"]))
    assert out.stats is not None
    assert out.stats.max == entry["output"][0]["Max"] and out.stats.mean == entry["output"][0]["Mean"]
    assert out.shape is not None
    assert out.stats.rms == entry["output"][0]["Norm"] / np.sqrt(np.prod(out.shape))
    assert out.meta["crc32"] == entry["output"][0]["md5"] and out.meta["call"] == 0
    assert weight.meta["crc32"] == entry["parameters"]["weight"]["md5"]


def test_statistics_with_equal_crcs_compare_clean_and_the_planted_change_is_named(tools, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tools / "msprobe-statistics-clean", copy)
    assert compare_exit(tools / "msprobe-statistics-clean", copy, "--quiet")[0] == 0
    code, text = compare_exit(tools / "msprobe-statistics-clean", tools / "msprobe-statistics-planted")
    assert code == 1 and "model.layers.1.mlp.down_proj" in text.split("FIRST DIVERGENCE")[1].splitlines()[1]


def test_tensors_are_read_from_beside_dump_json_not_from_the_recorded_path(tools, tmp_path):
    moved = tmp_path / "elsewhere"
    shutil.copytree(tools / "msprobe-tensor-clean", moved)  # dump_data_dir still names the producing machine's path
    path = _dump_json(moved)
    assert json.loads(path.read_text())["dump_data_dir"] != str(path.parent / "dump_tensor_data")
    trace = open_trace(moved)
    out = next(r for r in trace if r.checkpoint == "model.layers.1.mlp.down_proj" and r.stage is None)
    saved = torch.load(
        path.parent / "dump_tensor_data" / "Module.model.layers.1.mlp.down_proj.Linear.forward.0.output.0.pt",
        weights_only=True,
    )
    np.testing.assert_array_equal(out.tensor(), saved.numpy())
    assert not trace.diagnostics  # the .pt files are dump.json's companions, not traces of their own
    (path.parent / "dump_tensor_data" / "Module.model.layers.1.mlp.down_proj.Linear.forward.0.output.0.pt").unlink()
    again = open_trace(path)
    out = next(r for r in again if r.checkpoint == "model.layers.1.mlp.down_proj" and r.stage is None)
    assert out.loader is None and out.stats is not None
    assert any("is missing; its statistics kept" in str(d) for d in again.diagnostics)
