"""A map's view applies to a tensor however its format holds the bytes: read ahead in memory by the
binary-stream decoder, behind a loader (Parquet), or as every value inline (JSONL with all values)."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.compare import CompareOptions, compare
from tests.tracegen import record, write_frames, write_jsonl, write_parquet

WRITERS = {"frames": write_frames, "parquet": write_parquet}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_a_transposed_side_compares_equal_through_the_maps_transpose(tmp_path, fmt):
    rng = np.random.default_rng(7)
    tensors = [rng.standard_normal((3, 5)).astype(np.float32) for _ in range(4)]
    ref = write_frames(tmp_path / "ref.bin", [record("attn", x, token_idx=t) for t, x in enumerate(tensors)])
    ours = WRITERS[fmt](
        tmp_path / f"ours.{fmt}",
        [record("attn_t", np.ascontiguousarray(x.T), token_idx=t) for t, x in enumerate(tensors)],
    )
    (tmp_path / "view.toml").write_text('[names]\n"attn_t" = { name = "attn", transpose = [0, 1] }\n')
    viewed = compare(ref, ours, CompareOptions(maps=[str(tmp_path / "view.toml")]))
    assert viewed.status == "ok" and viewed.findings.pairs == 4
    (tmp_path / "plain.toml").write_text('[names]\n"attn_t" = "attn"\n')
    plain = compare(ref, ours, CompareOptions(maps=[str(tmp_path / "plain.toml")]))
    assert plain.status == "diverged"


def test_a_view_applies_to_values_held_inline(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ref = write_jsonl(tmp_path / "ref.jsonl", [record("attn", x, values=-1)])
    ours = write_jsonl(tmp_path / "ours.jsonl", [record("attn_t", np.ascontiguousarray(x.T), values=-1)])
    (tmp_path / "view.toml").write_text('[names]\n"attn_t" = { name = "attn", transpose = [0, 1] }\n')
    assert compare(ref, ours, CompareOptions(maps=[str(tmp_path / "view.toml")])).status == "ok"
