"""TorchTitan's numerics log and DebugMode's hash dump: statistics per op, and a float hash read as a
statistic. The fixtures are written by hand in their writers' layout (neither tool runs here)."""

from __future__ import annotations

import math

from orchlog import open_trace


def test_torchtitan_blocks_become_summary_records_of_module_and_op(tools):
    trace = open_trace(tools / "numerics" / "torchtitan-clean.log")
    records = list(trace)
    assert trace.header is not None
    assert trace.header["tool"] == "torchtitan-numerics"
    assert [(r.checkpoint, r.stage, r.layer) for r in records] == [
        ("tok_embeddings", "op_0_embedding", None),
        ("layers.1.feed_forward", "op_2_mm", 1),
        ("layers.1.feed_forward", "backward/op_2_mm", 1),
    ]
    ff = records[1]
    assert ff.stats is not None
    assert ff.shape is not None
    assert ff.shape == (3, 8) and ff.stats.min == -1.992031 and ff.stats.max == 1.703348
    assert (
        ff.stats.rms is not None
        and math.isclose(ff.stats.rms, 4.118805 / math.sqrt(24))
        and ff.meta["l1_norm"] == "1.001234e+01"
    )
    assert ff.meta["output_hash"] == "10.01234" and ff.meta["location"] == "model.py:268"


def test_debugmode_hashes_are_one_value_statistics_per_hashed_tensor(tools):
    trace = open_trace(tools / "numerics" / "debugmode-hashes.txt")
    records = list(trace)
    assert trace.header is not None and trace.header["tool"] == "pytorch-debugmode-hashes"
    assert [(r.checkpoint, r.stage) for r in records] == [
        ("layers.0.attention", "op_0_aten.mm.default/input [0][0]"),
        ("layers.0.attention", "op_0_aten.mm.default/input [0][1]"),
        ("layers.0.attention", "op_0_aten.mm.default/output"),
        ("layers.1.feed_forward", "op_1_aten.add.Tensor/output"),
    ]
    assert records[2].values is not None
    assert records[2].shape is not None
    assert records[2].values.tolist() == [7.125] and records[2].shape == (1,) and records[2].layer == 0
    assert records[3].stats is not None
    assert records[3].values is not None
    assert math.isnan(records[3].values[0]) and records[3].stats.nan_count == 1
    assert "not a digest" in records[0].meta["hash"]
