"""SGLang's dumper (a file per tensor, `{"value", "meta"}`), its TensorDumper (a file per forward pass) and
vllm-neuron's captures (a tensor per file): torch files told apart by what they hold."""

from __future__ import annotations

import shutil

import numpy as np
import torch

from orchlog import open_trace
from tests.read.formats.tools.conftest import compare_exit
from tests.tracegen import tensor_of


def test_dumper_files_become_records_keyed_by_module_stage_layer_and_step(tools):
    trace = open_trace(tools / "sglang-clean")
    records = list(trace)
    assert trace.header is not None
    assert trace.headers == [trace.header] and trace.header["tool"] == "sglang-dumper"
    assert not trace.diagnostics
    files = sorted((tools / "sglang-clean" / "dump_micro").glob("*.pt"))
    assert len(records) == len(files)
    down = next(r for r in records if r.checkpoint == "model.layers.1.mlp.down_proj" and r.stage is None)
    assert down.layer == 1 and down.step == 0 and down.rank == 0
    assert down.location is not None
    raw = torch.load(down.location.path, weights_only=True)
    assert raw["meta"]["name"] == "non_intrusive__model.layers.1.mlp.down_proj.output"
    assert down.seq == raw["meta"]["dump_index"]  # the dumper's counter, not the name order of its files
    np.testing.assert_array_equal(down.tensor(), raw["value"].numpy())
    first_input = next(r for r in records if r.checkpoint == "model.layers.0.mlp.down_proj" and r.stage == "input")
    assert first_input.layer == 0


def test_a_dumper_copy_compares_clean(tools, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tools / "sglang-clean", copy)
    assert compare_exit(tools / "sglang-clean", copy, "--quiet")[0] == 0


def test_dims_in_the_meta_become_the_records_shard_fields(tmp_path):
    def save(name, dims, tp_rank):
        meta = {"name": name, "step": 0, "rank": tp_rank, "dump_index": 1, "dims": dims,
                "sglang_parallel_info": {"tp_rank": tp_rank, "tp_size": 2}}  # fmt: skip
        torch.save({"value": torch.ones(3, 4), "meta": meta}, tmp_path / f"step=0___rank={tp_rank}___name={name}.pt")

    save("split", "t h[tp]", 1)
    save("partial", "t h[tp:partial]", 1)
    save("replicated", "t h # tp:replicated", 1)
    save("zigzag", "t[cp:zigzag] h", 1)
    by_name = {r.checkpoint: r for r in open_trace(tmp_path)}
    assert (by_name["split"].shard_axis, by_name["split"].shard_index, by_name["split"].num_shards) == (1, 1, 2)
    assert by_name["partial"].shard_partial is True and by_name["partial"].shard_axis is None
    assert by_name["replicated"].shard_partial is False
    assert by_name["zigzag"].shard_axis is None and by_name["zigzag"].shard_partial is None
    assert {r.rank for r in by_name.values()} == {1} and {r.world_size for r in by_name.values()} == {2}


def test_tensor_dumper_passes_are_steps_and_the_directory_names_the_rank(tools):
    records = list(open_trace(tools / "tensor-dumper-clean"))
    pass_file = tools / "tensor-dumper-clean" / "TP0_PP0_Rank0_pid0" / "Pass00000.pt"
    saved = torch.load(pass_file, weights_only=True)
    assert [r.checkpoint for r in records if r.stage is None] == list(saved)  # a list value: stages output.1, ...
    assert [r.stage for r in records if r.checkpoint == "model.rotary_emb"] == [None, "output.1"]
    r = next(r for r in records if r.checkpoint == "model.layers.1.mlp.down_proj")
    assert (r.step, r.rank, r.layer) == (0, 0, 1)
    np.testing.assert_array_equal(r.tensor(), saved["model.layers.1.mlp.down_proj"].numpy())
    code, text = compare_exit(tools / "tensor-dumper-clean", tools / "tensor-dumper-planted")
    assert code == 1 and "model.layers.1.mlp.down_proj, layer 1" in text.split("FIRST DIVERGENCE")[1]


def test_vllm_neuron_captures_take_module_step_and_rank_from_their_path(tmp_path):
    step = tmp_path / "prompt_ab12" / "step_3"
    step.mkdir(parents=True)
    torch.save(torch.arange(6.0).reshape(2, 3), step / "model.layers.2.mlp_rank1.pt")
    (r,) = list(open_trace(tmp_path))
    assert (r.checkpoint, r.layer, r.step, r.rank) == ("model.layers.2.mlp", 2, 3, 1)
    assert r.meta == {"prompt": "prompt_ab12"} and tensor_of(r).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_a_tensor_whose_dims_name_its_tokens_becomes_one_record_per_token(tmp_path):
    def save(index, name, value, **extra):
        meta = {"step": 2, "rank": 0, "dump_index": index, "name": name, **extra}
        torch.save(
            {"value": value, "meta": meta}, tmp_path / f"step=2___rank=0___dump_index={index}___name={name}___x=1.pt"
        )

    save(1, "positions", torch.tensor([5, 6, 7]))
    save(2, "input_ids", torch.tensor([11, 12, 13]))
    hidden = torch.arange(12.0).reshape(3, 4)
    save(3, "layer_out", hidden, dims="t h[tp]", layer_id=0, sglang_parallel_info={"tp_rank": 0, "tp_size": 2})
    save(10, "no_dims", hidden)
    rows = [r for r in open_trace(tmp_path) if r.checkpoint == "layer_out"]
    assert [(r.token_idx, r.token_id, r.shape) for r in rows] == [(5, 11, (4,)), (6, 12, (4,)), (7, 13, (4,))]
    assert [r.shard_axis for r in rows] == [0, 0, 0] and tensor_of(rows[1]).tolist() == [4.0, 5.0, 6.0, 7.0]
    (whole,) = [r for r in open_trace(tmp_path) if r.checkpoint == "no_dims"]
    assert whole.token_idx is None and whole.shape == (3, 4)
