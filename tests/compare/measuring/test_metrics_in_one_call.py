"""Whole-tensor pairs in memory are measured in one native call, with exactly the numbers of the per-pair path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from orchlog import kernels
from orchlog.compare.measuring import metrics
from orchlog.compare.measuring.metrics import COLUMNS, measure
from orchlog.encoding import dtypes
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")

DTYPES = ("f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64")


def _array(rng: np.random.Generator, dtype: str, n: int, base: np.ndarray | None) -> np.ndarray:
    """n elements of a dtype, near `base` when given, with NaN/Inf now and then for floats."""
    x = (
        rng.standard_normal(n) * rng.choice([1e-3, 1.0, 100.0])
        if base is None
        else base[:n] + rng.standard_normal(n) * 1e-3
    )
    if dtype in ("i8", "u8", "i32", "i64"):
        info = np.iinfo(dtypes.storage_dtype(dtype))
        return np.clip(np.round(x * 50), info.min, info.max).astype(dtypes.storage_dtype(dtype))
    store = dtypes.storage_dtype(dtype)
    special: dict[float, float]
    if dtype == "bf16":
        arr = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        special = {np.nan: 0x7FC0, np.inf: 0x7F80, -np.inf: 0xFF80}
    else:
        arr = x.astype(store)
        special = {v: v for v in (np.nan, np.inf, -np.inf)}
    if n and rng.random() < 0.15:
        for _ in range(rng.integers(1, 4)):
            value = list(special)[rng.integers(0, 3)]
            arr[rng.integers(0, n)] = special[value]
    return arr


def _batch(rng: np.random.Generator, tensors: list[tuple[str, np.ndarray]], inline_values: list[bool]) -> RecordBatch:
    """Records whose tensors sit in one shared buffer at unaligned offsets, or (when asked) as every value inline."""
    blob = bytearray()
    starts = []
    for _, arr in tensors:
        blob += bytes(rng.integers(0, 256, size=int(rng.integers(0, 8)), dtype=np.uint8))
        starts.append(len(blob))
        blob += arr.tobytes()
    buffer = np.frombuffer(bytes(blob), dtype=np.uint8)
    records = []
    for (dtype, arr), by_values in zip(tensors, inline_values):
        values = dtypes.widen(arr, dtype).astype(np.float64) if by_values else np.zeros(0)
        records.append(TraceRecord("x", dtype=dtype, shape=(arr.size,), numel=arr.size, values=values))
    batch = RecordBatch.from_records(records)
    assert batch.data_buf is not None and batch.data_start is not None and batch.data_len is not None
    for i, ((_, arr), by_values) in enumerate(zip(tensors, inline_values)):
        if not by_values:
            batch.data_buf[i], batch.data_start[i], batch.data_len[i] = buffer, starts[i], arr.nbytes
    return batch


def _random_pairs(rng: np.random.Generator, pairs: int, large: bool = False) -> tuple[RecordBatch, RecordBatch]:
    a, b, va, vb = [], [], [], []
    for _ in range(pairs):
        n = int(rng.choice([0, 1, 7, 99, 100, 896, 1000, 5000, 40000]))
        if large and rng.random() < 0.3:
            n = int(rng.integers(1 << 19, 1 << 20))
        da, db = rng.choice(DTYPES), rng.choice(DTYPES) if rng.random() < 0.3 else None
        db = db or da
        ref = rng.standard_normal(n + 8)
        nb = n if rng.random() < 0.8 else int(rng.integers(0, n + 8))
        a.append((da, _array(rng, da, n, ref)))
        b.append((db, _array(rng, db, nb, ref)))
        va.append(rng.random() < 0.2)
        vb.append(rng.random() < 0.2)
    return _batch(rng, a, va), _batch(rng, b, vb)


def _columns(a: RecordBatch, b: RecordBatch, one_by_one: bool, monkeypatch) -> dict[str, np.ndarray]:
    idx = np.arange(len(a))
    with monkeypatch.context() as m:
        if one_by_one:
            m.setattr(kernels, "NATIVE", False)
        t = measure(a, b, idx, idx, lambda _: False)
    assert (t.basis == metrics.TENSOR).all()
    return t.m


@pytest.mark.parametrize("seed", range(6))
def test_random_pairs_measure_the_same_in_one_call_as_one_by_one(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    a, b = _random_pairs(rng, 300)
    calls: list[tuple[np.ndarray, np.ndarray]] = []
    native = kernels.tensor_diffs

    def counted(*args: Any) -> tuple[np.ndarray, np.ndarray]:
        out = native(*args)
        assert out is not None
        calls.append(out)
        return out

    monkeypatch.setattr(kernels, "tensor_diffs", counted)
    batched, single = _columns(a, b, False, monkeypatch), _columns(a, b, True, monkeypatch)
    assert len(calls) == 1 and (~calls[0][1]).sum() > 200  # most pairs measured in the one call
    for c in COLUMNS:
        np.testing.assert_array_equal(batched[c], single[c], err_msg=c, strict=True)


def test_pairs_large_enough_for_every_core_measure_the_same(monkeypatch):
    rng = np.random.default_rng(7)
    a, b = _random_pairs(rng, 12, large=True)
    batched, single = _columns(a, b, False, monkeypatch), _columns(a, b, True, monkeypatch)
    for c in COLUMNS:
        np.testing.assert_array_equal(batched[c], single[c], err_msg=c, strict=True)


def test_tensor_bytes_outside_their_buffer_are_an_error_not_a_read():
    buf = np.zeros(16, dtype=np.uint8)
    with pytest.raises(IndexError):
        at, none = np.array([8]), np.array([0])
        kernels.tensor_diffs([buf], at, np.array([4]), none, [buf], none, np.array([4]), none)


def _negative_zeros(dtype: str, n: int) -> np.ndarray:
    if dtype == "bf16":
        return np.full(n, 0x8000, dtype=np.uint16)
    return np.full(n, -0.0, dtype=dtypes.storage_dtype(dtype))


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
def test_equal_tensors_measure_the_same_in_one_call_with_a_p99_of_zero(dtype, monkeypatch):
    # The native call skips the selection for equal pairs; -0 against +0 is an equal pair too.
    rng = np.random.default_rng(11)
    sizes = (1, 7, 896, 5000)
    tensors = []
    for n in sizes:
        arr = _array(rng, dtype, n, None)
        arr[~np.isfinite(dtypes.widen(arr, dtype))] = 0
        tensors.append((dtype, arr))
    zeros = [(dtype, np.zeros(n, dtype=dtypes.storage_dtype(dtype))) for n in sizes]
    minus = [(dtype, _negative_zeros(dtype, n)) for n in sizes]
    for a_tensors, b_tensors in ((tensors, tensors), (zeros, minus)):
        inline = [False] * len(sizes)
        a, b = _batch(rng, a_tensors, inline), _batch(rng, b_tensors, inline)
        batched, single = _columns(a, b, False, monkeypatch), _columns(a, b, True, monkeypatch)
        for c in COLUMNS:
            np.testing.assert_array_equal(batched[c], single[c], err_msg=c, strict=True)
        assert (batched["p99_abs"] == 0).all() and (batched["max_abs"] == 0).all()
