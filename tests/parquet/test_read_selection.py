"""Selections are pushed down: row groups whose statistics cannot match are not read at all."""

from __future__ import annotations

import numpy as np

from orchlog.encoding.record import ALL_VALUES
from orchlog.parquet import read
from tests.tracegen import record, tensor_of, write_parquet


def _bytes_read_by_this_process() -> int:
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


def _decode_trace(tmp_path):
    """20 tokens x 4 layers x 2 checkpoints, one token per row group, values=all so summaries weigh something."""
    rng = np.random.default_rng(0)
    recs = [
        record(
            cp, rng.standard_normal(8192).astype(np.float32), token_idx=t, layer=layer, step=t, seq=i, values=ALL_VALUES
        )
        for i, (t, layer, cp) in enumerate(
            (t, layer, cp) for t in range(20) for layer in range(4) for cp in ("attn_out", "ffn_out")
        )
    ]
    return write_parquet(tmp_path / "t.parquet", recs, row_group_bytes=8 * (32 * 1024 + 64 * 1024))


def test_selected_rows_are_exactly_those_asked_for(tmp_path):
    path = _decode_trace(tmp_path)
    picked = list(read(path, token_idx=range(3, 5), layer=2, checkpoint="ffn_*"))
    assert [(r.token_idx, r.layer, r.checkpoint) for r in picked] == [(3, 2, "ffn_out"), (4, 2, "ffn_out")]
    assert [r.order for r in picked] == [0, 1]
    assert [r.location and r.location.row for r in picked] == [3 * 8 + 5, 4 * 8 + 5], "rows are numbered in the file"


def test_a_token_selection_skips_the_row_groups_of_other_tokens(tmp_path):
    path = _decode_trace(tmp_path)
    before = _bytes_read_by_this_process()
    assert len(list(read(path))) == 160
    everything = _bytes_read_by_this_process() - before
    before = _bytes_read_by_this_process()
    assert len(list(read(path, where="token=7"))) == 8
    one_token = _bytes_read_by_this_process() - before
    assert one_token < everything / 8, (one_token, everything)


def test_selected_tensors_load_lazily_and_exactly(tmp_path):
    path = _decode_trace(tmp_path)
    (rec,) = list(read(path, token_idx=11, layer=3, checkpoint="attn_out"))
    assert rec.values is not None
    np.testing.assert_array_equal(tensor_of(rec).astype(np.float64), rec.values)
