"""Matching records by key: first with first among equal keys, streamed across batches."""

from __future__ import annotations

import numpy as np

from orchlog.compare.pairing.align import Aligner, match
from orchlog.compare.pairing.keys import Interner, key_matrix
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


def test_the_backlog_stays_one_batch_when_both_sides_log_alike(tmp_path):
    # The side whose records all found partners is read next, whatever its reader has prefetched: the
    # records waiting for a partner never exceed two batches (a side run ahead would be copied into
    # every round).
    recs = [record(f"c{i % 5}", np.full(3, i, np.float32), token_idx=i // 5) for i in range(400)]
    a, b = (open_trace(write_frames(tmp_path / f"{n}.bin", recs)) for n in "ab")
    interner = Interner()
    aligner = Aligner(a, b, lambda batch: key_matrix(batch, ("checkpoint", "token_idx"), interner))
    sizes = {0: 9, 1: 13}  # different batch sizes on the two sides: every round leaves a tail
    for s, side in enumerate(aligner.sides):
        t = (a, b)[s]
        side.batches = (
            big.take(np.arange(i, min(i + sizes[s], len(big))))
            for big in t.batches()
            for i in range(0, len(big), sizes[s])
        )
    # a's reader has run to the end of its file ahead of the walk; b's not begun (progress stubbed)
    a.progress = lambda: 1.0  # type: ignore[method-assign]
    b.progress = lambda: 0.0  # type: ignore[method-assign]
    waiting = []
    for rnd in aligner:
        waiting.append(max(len(rnd.a), len(rnd.b)))
    assert sum(len(r) for r in [aligner.leftover_a, aligner.leftover_b]) == 0
    assert max(waiting) <= 13 + 9


def _batched(trace, size):
    return (
        big.take(np.arange(i, min(i + size, len(big)))) for big in trace.batches() for i in range(0, len(big), size)
    )


def test_batches_that_end_a_few_records_apart_make_rounds_of_a_batch(tmp_path):
    # Two engines' windows hold a few records more or less each: pairing as soon as one side is read made
    # every other round one of those few records, at a whole round's cost.
    recs = [record(f"c{i % 5}", np.full(3, i, np.float32), token_idx=i // 5) for i in range(1000)]
    a, b = (open_trace(write_frames(tmp_path / f"{n}.bin", recs)) for n in "ab")
    interner = Interner()
    aligner = Aligner(a, b, lambda batch: key_matrix(batch, ("checkpoint", "token_idx"), interner))
    for side, size in zip(aligner.sides, (100, 103)):
        side.batches = _batched(side.trace, size)
    rounds = [len(rnd.ia) for rnd in aligner]
    assert sum(rounds) == 1000 and len(aligner.leftover_a) == len(aligner.leftover_b) == 0
    # Once the drift reaches a quarter of a batch, a round of the drift is worth its cost: one such round.
    assert len(rounds) <= 12 and sum(r < 90 for r in rounds) <= 2, rounds


def test_a_side_that_ends_while_its_batch_is_awaited_still_pairs_what_it_holds(tmp_path):
    # b's last batch is a few records, read while a waits for it: the records both hold still pair.
    recs = [record(f"c{i % 5}", np.full(3, i, np.float32), token_idx=i // 5) for i in range(205)]
    a, b = (open_trace(write_frames(tmp_path / f"{n}.bin", recs)) for n in "ab")
    interner = Interner()
    aligner = Aligner(a, b, lambda batch: key_matrix(batch, ("checkpoint", "token_idx"), interner))
    for side, size in zip(aligner.sides, (205, 200)):
        side.batches = _batched(side.trace, size)
    assert sum(len(rnd.ia) for rnd in aligner) == 205
    assert len(aligner.leftover_a) == len(aligner.leftover_b) == 0
