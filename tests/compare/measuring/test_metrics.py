"""Each pair is measured on the best basis both sides allow: whole tensors, equal hashes, or summaries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchlog.compare.measuring.metrics import BASES, measure
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord
from orchlog.schema_gen import Stats

IDX = np.array([0])


def _rec(values=(), numel=None, blake3=None, stats=None, loader=None, dtype="f32", shape=None, name="x"):
    values = np.asarray(values, dtype=np.float64)
    n = numel if numel is not None else values.size
    return TraceRecord(
        name, dtype=dtype, shape=shape or (n,), numel=n, values=values, blake3=blake3, stats=stats, loader=loader
    )


def _measure(ra, rb, logits=False, track=None):
    t = measure(RecordBatch.from_records([ra]), RecordBatch.from_records([rb]), IDX, IDX, lambda _: logits, track)
    return t, {k: v[0] for k, v in t.m.items()}, BASES[t.basis[0]]


def _explode():
    raise AssertionError("the data was read")


def test_equal_hashes_settle_a_pair_without_reading_data():
    st = Stats(-1.0, 2.0, 0.5, 1.2, 2.0, 0, 0)
    t, m, basis = _measure(
        _rec(numel=4, blake3="a" * 64, stats=st, loader=_explode),
        _rec(numel=4, blake3="a" * 64, stats=st, loader=_explode),
    )
    assert basis == "hash" and t.hash_state[0] == 1
    assert m["max_abs"] == 0 and m["cosine"] == 1 and m["rms_a"] == 1.2


def test_whole_tensors_give_exact_metrics_and_logits_metrics():
    a = np.array([1.0, 5.0, 2.0], dtype=np.float32)
    b = np.array([1.0, 2.0, 5.5], dtype=np.float32)
    _, m, basis = _measure(
        _rec(numel=3, loader=a.tobytes, blake3="a" * 64),
        _rec(numel=3, loader=b.tobytes, blake3="b" * 64),
        logits=True,
        track=1,
    )
    assert basis == "tensor"
    assert m["max_abs"] == 3.5 and m["top1_a"] == 1 and m["top1_b"] == 2 and m["top1_match"] == 0
    assert (m["rank_a"], m["rank_b"]) == (1, 2) and m["kl"] > 0


def test_inline_values_that_are_all_there_count_as_whole_tensors():
    _, m, basis = _measure(_rec([1.0, 2.0]), _rec([1.0, 2.5]))
    assert basis == "tensor" and m["max_abs"] == 0.5


def test_summaries_bound_max_abs_from_below_with_whole_tensor_stats():
    sa = Stats(-1.0, 3.0, 0.25, 1.5, 3.0, 0, 0)
    sb = Stats(-1.0, 3.8, 0.25, 1.5, 3.8, 0, 0)  # the leading values agree; the maximum further in does not
    _, m, basis = _measure(
        _rec([0.5, 0.25], numel=1000, stats=sa, blake3="a" * 64),
        _rec([0.5, 0.25], numel=1000, stats=sb, blake3="b" * 64),
    )
    assert basis == "bounds"
    assert m["max_abs"] == pytest.approx(0.8) and math.isnan(m["mean_abs"]) and m["n"] == 2  # nothing proven on it
    assert m["max_b"] == 3.8  # ranges come from the whole-tensor stats


def test_different_hashes_with_nothing_else_to_go_on_prove_no_lower_bound():
    st = Stats(None, None, None, 0.9123, None, 0, 0)
    t, m, basis = _measure(_rec(numel=10, blake3="a" * 64, stats=st), _rec(numel=10, blake3="b" * 64, stats=st))
    assert basis == "bounds" and math.isnan(m["max_abs"]) and m["rms_a"] == 0.9123
    # Equal rms: nothing below; the rms of both bound the difference above: |a - b| <= |a| + |b|.
    assert t.lo["max_abs"][0] == 0 and t.hi["l2"][0] == pytest.approx(2 * 0.9123 * math.sqrt(10))


def test_rms_alone_still_bounds_max_abs():
    _, m, _ = _measure(
        _rec(numel=10, blake3="a" * 64, stats=Stats(None, None, None, 0.9123, None, 0, 0)),
        _rec(numel=10, blake3="b" * 64, stats=Stats(None, None, None, 0.9130, None, 0, 0)),
    )
    assert m["max_abs"] == pytest.approx(0.0007)


def test_a_dtype_or_shape_mismatch_is_flagged_and_the_overlap_still_compared():
    t, m, _ = _measure(_rec([1.0, 2.0, 3.0, 4.0], shape=(4,)), _rec([1.0, 2.0, 3.0, 4.5], dtype="f16", shape=(2, 2)))
    assert t.dtype_mismatch[0] and t.shape_mismatch[0] and not t.numel_mismatch[0]
    assert m["max_abs"] == 0.5


def test_different_value_counts_compare_the_common_prefix():
    t, m, basis = _measure(_rec([1.0, 2.0, 3.0], numel=100), _rec([1.0, 2.25], numel=50))
    assert basis == "bounds" and t.numel_mismatch[0] and m["n"] == 2 and m["max_abs"] == 0.25


def test_hash_states_read_as_words_agree_with_bytes_compared_one_by_one():
    from orchlog.compare.measuring.metrics import _hash_state

    rng = np.random.default_rng(5)
    pool = [b"", b"\0", b"ab", b"ab\0", b"a" * 64, b"b" * 64, b"a" * 63 + b"b", b"\0" * 63 + b"x"]
    ha = np.array([pool[i] for i in rng.integers(0, len(pool), 400)], dtype="S64")
    hb = np.array([pool[i] for i in rng.integers(0, len(pool), 400)], dtype="S64")
    expected = [-1 if not x or not y else int(x == y) for x, y in zip(ha.tolist(), hb.tolist())]
    assert _hash_state(ha, hb).tolist() == expected
    assert _hash_state(ha.astype("S70"), hb.astype("S70")).tolist() == expected  # not whole words: bytes
    assert _hash_state(ha[::3], hb[::3]).tolist() == expected[::3]  # strided
    empty = np.array([b"", b""], dtype="S0")
    assert _hash_state(empty, empty).tolist() == [-1, -1]  # a column with no room for a hash


@pytest.mark.parametrize("ranks", [(1,), (2,), (0, 1, 2, 3)])
def test_shape_mismatches_agree_with_comparing_each_pairs_shapes(ranks):
    from orchlog.compare.measuring.metrics import _shape_mismatch

    rng = np.random.default_rng(len(ranks))

    def shape():
        return tuple(int(d) for d in rng.integers(1, 4, size=int(rng.choice(ranks))))

    shapes_a = [shape() for _ in range(300)]
    shapes_b = [s if rng.random() < 0.6 else shape() for s in shapes_a]
    batch = [
        RecordBatch.from_records([TraceRecord("x", dtype="f32", shape=s, numel=int(np.prod(s))) for s in side])
        for side in (shapes_a, shapes_b)
    ]
    ia, ib = rng.permutation(300), rng.permutation(300)
    expected = [shapes_a[i] != shapes_b[j] for i, j in zip(ia, ib)]
    assert _shape_mismatch(batch[0], batch[1], ia, ib).tolist() == expected
