"""Layout views from name maps: each operation against NumPy, shapes known before any data is read,
no copy where NumPy needs none, and records viewed in a batch keep what still holds of them."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.errors import OrchlogError
from orchlog.maps.views import Reshape, View, Viewed, ViewError, apply_view, parse_op, parse_view, round_to
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord
from orchlog.schema_gen import Stats


def _view(*ops) -> View:
    return parse_view(list(ops))


@pytest.mark.parametrize(
    "ops, numpy",
    [
        ([("slice", "0")], lambda x: x[0]),
        ([("slice", "..., 1:3")], lambda x: x[..., 1:3]),
        ([("slice", ":, ::2, -1")], lambda x: x[:, ::2, -1]),
        ([("permute", [2, 0, 1])], lambda x: x.transpose(2, 0, 1)),
        ([("transpose", [0, 2])], lambda x: x.swapaxes(0, 2)),
        ([("reshape", [0, -1])], lambda x: x.reshape(x.shape[0], -1)),
        ([("reshape", [-1])], lambda x: x.reshape(-1)),
        ([("slice", "0"), ("transpose", [0, 1]), ("reshape", [0, -1])], lambda x: x[0].T.reshape(x.shape[2], -1)),
    ],
)
def test_each_operation_does_what_numpy_does_and_knows_its_shape_first(ops, numpy):
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    view = _view(*ops)
    assert np.array_equal(view.apply(x), numpy(x))
    assert view.shape(x.shape) == numpy(x).shape


def test_reshape_keeps_an_axis_with_0_so_a_map_need_not_know_the_head_count():
    for heads in (2, 4, 14):
        assert Reshape((0, -1, 2)).shape((heads, 16)) == (heads, 8, 2)


@pytest.mark.parametrize(
    "ops, shape, message",
    [
        ([("permute", [1, 0])], (2, 3, 4), "not a permutation of 3 axes"),
        ([("reshape", [5, -1])], (2, 3), "does not divide"),
        ([("slice", "0, 0, 0")], (2, 3), "indexes 3 axes"),
        ([("slice", "5")], (2, 3), "out of range"),
        ([("transpose", [0, 3])], (2, 3), "out of range"),
    ],
)
def test_a_view_that_does_not_fit_a_shape_says_why(ops, shape, message):
    with pytest.raises(ViewError, match=message):
        _view(*ops).shape(shape)


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("slice", "a:b", "integers"),
        ("slice", 3, "string"),
        ("permute", [1.5, 0], "list of integers"),
        ("transpose", [0, 1, 2], "list of 2 integers"),
        ("reshape", [-1, -1], "at most one -1"),
        ("dtype", "i8", "choose one of"),
        ("rotate", 1, "unknown view operation"),
    ],
)
def test_bad_operations_are_clear_errors(name, value, message):
    with pytest.raises(OrchlogError, match=message):
        parse_op(name, value)


def test_bf16_rounding_is_to_nearest_even():
    one = np.float32(1.0)
    step = np.float32(2.0**-7)  # bf16 keeps 7 fraction bits
    x = np.array([one + step / 2, one + step * 1.5, one + step * 0.75, np.nan, -3.0], dtype=np.float32)
    out = round_to(x, "bf16")
    assert out[0] == one and out[1] == one + 2 * step and out[2] == one + step
    assert np.isnan(out[3]) and out[4] == -3.0
    assert round_to(np.array([1.0 + 2**-12], np.float32), "f16")[0] == 1.0


def test_random_views_of_random_tensors_agree_with_numpy():
    rng = np.random.default_rng(12)
    for _ in range(200):
        shape = tuple(int(d) for d in rng.integers(1, 5, size=rng.integers(1, 5)))
        x = rng.standard_normal(shape).astype(np.float32)
        perm = [int(p) for p in rng.permutation(len(shape))]
        start = int(rng.integers(0, shape[0]))
        view = _view(("permute", perm), ("reshape", [0, -1]), ("slice", f"{start}:"))
        expected = x.transpose(perm).reshape(x.shape[perm[0]], -1)[start:]
        assert np.array_equal(view.apply(x), expected)
        assert view.shape(shape) == expected.shape
        index = view.index_prefix(shape)
        assert np.array_equal(x.reshape(-1)[index], expected.reshape(-1))


def test_a_view_of_contiguous_bytes_copies_nothing_until_it_must():
    base = np.arange(2 * 3 * 4, dtype=np.float32)
    load = lambda: base.data.cast("B")  # noqa: E731
    leading = Viewed(load, "f32", (2, 3, 4), _view(("slice", "1"), ("reshape", [-1])), "f32")
    assert np.shares_memory(leading.array(), base)
    permuted = Viewed(load, "f32", (2, 3, 4), _view(("permute", [2, 1, 0])), "f32")
    assert np.shares_memory(permuted.array(), base)  # a view, until bytes must be in C order
    got = np.frombuffer(permuted(), dtype=np.float32).reshape(4, 3, 2)
    assert np.array_equal(got, base.reshape(2, 3, 4).transpose(2, 1, 0))


def test_viewing_records_in_a_batch_updates_what_a_view_changes_and_keeps_what_holds():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    stats = Stats(0.0, 5.0, 2.5, 3.0, 5.0, 0, 0)
    raw = x.reshape(-1).data.cast("B")
    records = [
        TraceRecord(
            "a",
            dtype="f32",
            shape=(2, 3),
            numel=6,
            values=x.reshape(-1).astype(np.float64),
            stats=stats,
            blake3="c" * 64,
            loader=lambda: raw,
        ),
        TraceRecord("b", dtype="f32", shape=(2, 3), numel=6, values=np.array([0.0, 1.0, 2.0, 3.0]), stats=stats),
        TraceRecord("c", dtype="f32", shape=(5,), numel=5, values=np.zeros(5)),
    ]
    problems = []
    batch = RecordBatch.from_records(records)
    permuted = apply_view(batch, np.array([0, 1, 2]), _view(("transpose", [0, 1])), lambda *p: problems.append(p))
    assert permuted.shape_of(0) == (3, 2) and permuted.numel[0] == 6
    assert permuted.row_values(0).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert permuted.row_values(1).tolist() == [0.0, 3.0, 1.0]  # as far as the leading values reach
    assert permuted.stats[0, 3] == 3.0 and permuted.blake3[0] == b""  # same elements; other bytes
    assert np.frombuffer(permuted.loader[0](), np.float32).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert permuted.shape_of(2) == (5,) and len(problems) == 1 and "out of range" in str(problems[0][2])
    sliced = apply_view(batch, np.array([0]), _view(("slice", ":, 1"), ("dtype", "bf16")), lambda *p: None)
    assert sliced.shape_of(0) == (2,) and sliced.dtype[0] == "f32" and np.isnan(sliced.stats[0]).all()
    assert np.frombuffer(sliced.loader[0](), np.float32).tolist() == [1.0, 4.0]
