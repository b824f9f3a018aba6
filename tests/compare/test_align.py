"""Matching records by key: first with first among equal keys, streamed across batches."""

from __future__ import annotations

import numpy as np

from orchlog.compare.align import Aligner, match
from orchlog.compare.keys import Interner, key_matrix
from orchlog.read.paths import open_trace
from tests.tracegen import record, write_frames, write_jsonl


def _k(*rows):
    return np.array(rows, dtype=np.int64).reshape(len(rows), -1)


def test_identical_key_sequences_pair_row_with_row():
    ia, ib = match(_k(1, 2, 3), _k(1, 2, 3))
    assert ia.tolist() == [0, 1, 2] and ib.tolist() == [0, 1, 2]


def test_equal_keys_pair_in_order_of_appearance():
    ia, ib = match(_k(5, 7, 5, 9), _k(7, 5, 5, 5))
    assert list(zip(ia.tolist(), ib.tolist())) == [(0, 1), (1, 0), (2, 2)]


def test_keys_without_a_partner_are_left_out():
    ia, ib = match(_k((1, 0), (2, 0)), _k((2, 0), (3, 0)))
    assert (ia.tolist(), ib.tolist()) == ([1], [0])
    assert match(_k(1), np.zeros((0, 1), dtype=np.int64))[0].size == 0


def _trace_pair(tmp_path, order_b):
    recs = [record(f"c{i % 7}", np.full(2, i, np.float32), token_idx=i // 7, seq=i) for i in range(70)]
    a = write_jsonl(tmp_path / "a.jsonl", recs)
    b = write_frames(tmp_path / "b.bin", [recs[i] for i in order_b] + [record("extra", np.ones(1, np.float32))])
    return open_trace(a), open_trace(b)


def test_the_aligner_finds_every_pair_whatever_the_order_and_batch_size(tmp_path):
    order_b = list(np.random.default_rng(1).permutation(70))
    a, b = _trace_pair(tmp_path, order_b)
    interner = Interner()
    aligner = Aligner(a, b, lambda batch: key_matrix(batch, ("checkpoint", "token_idx"), interner))
    aligner.sides[0].batches = (
        batch
        for big in a.batches()
        for batch in (big.take(np.arange(i, min(i + 9, len(big)))) for i in range(0, len(big), 9))
    )
    pairs = []
    for rnd in aligner:
        pairs += [(rnd.a.values[rnd.a.val_off[i]], rnd.b.values[rnd.b.val_off[j]]) for i, j in zip(rnd.ia, rnd.ib)]
    assert sorted(pairs) == [(float(i), float(i)) for i in range(70)]
    assert len(aligner.leftover_a) == 0 and aligner.leftover_b.checkpoint.tolist() == ["extra"]
    assert aligner.rows_read == (70, 71)
