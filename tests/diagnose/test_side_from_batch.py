"""A Side read from a batch's columns is the Side of that row's record, whatever the row holds."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import orchlog
from orchlog.diagnose.case import Side
from orchlog.read.batch import RecordBatch
from orchlog.read.paths import open_trace
from orchlog.read.trace import Location, TraceRecord
from orchlog.schema_gen import Stats


def _same_side(got: Side, want: Side) -> None:
    assert got.full == want.full
    assert got.values.dtype == want.values.dtype == np.float64
    np.testing.assert_array_equal(got.values, want.values)
    assert (got.numel, got.shape, got.dtype, got.blake3) == (want.numel, want.shape, want.dtype, want.blake3)
    assert got.stats == want.stats  # NaN never reaches a stats dict: an unsaid stat is left out
    assert (got.sketch is None) == (want.sketch is None)
    if want.sketch is not None:
        np.testing.assert_array_equal(got.sketch, want.sketch)


def _every_row_agrees(batches) -> int:
    rows = 0
    for batch in batches:
        for i in range(len(batch)):
            _same_side(Side.from_batch(batch, i), Side.from_record(batch.record(i)))
            rows += 1
    return rows


def _logged(path: Path, mode: str) -> None:
    rng = np.random.default_rng(7)
    orchlog.configure(path=str(path), team="t", mode=mode)
    try:
        orchlog.log("hidden", rng.standard_normal((3, 5)).astype(np.float32), token_idx=0, layer=0)
        bf16_bits = rng.standard_normal(40).astype(ml_dtypes.bfloat16).view(np.uint16)
        orchlog.log("gate", bf16_bits, dtype="bf16", token_idx=0, layer=1)
        orchlog.log("bad", np.array([1.0, np.nan, np.inf, -2.0], dtype=np.float32), token_idx=1)
        orchlog.log("ids", np.arange(6, dtype=np.int32), token_idx=1, layer=2)
        orchlog.log("wide", rng.standard_normal(300).astype(np.float64), token_idx=2)
    finally:
        orchlog.close()


@pytest.mark.parametrize(("mode", "suffix"), [("full", ".bin"), ("summary", ".bin"), ("summary", ".jsonl")])
def test_rows_of_a_logged_trace(tmp_path: Path, mode: str, suffix: str) -> None:
    path = tmp_path / f"trace{suffix}"
    _logged(path, mode)
    assert _every_row_agrees(open_trace(str(path)).batches()) == 5


def test_rows_records_leave_partly_said():
    """A legacy sketch in meta, stats partly unsaid, bytes that disagree with the record, a loader that
    fails, a shape that does not make numel: the cases a whole record settled one by one."""
    arr = np.arange(6, dtype=np.float32)

    def gone() -> bytes:
        raise OSError("the file is gone")

    records = [
        TraceRecord("whole", dtype="f32", shape=(2, 3), numel=6, values=arr[:2].astype(np.float64),
                    loader=arr.tobytes, blake3="ab" * 32),
        TraceRecord("legacy", numel=100, values=np.array([1.0, 2.0]), meta={"sketch": [3.0, 4.0]},
                    stats=Stats(None, 2.0, None, 1.5, 2.0, 3, 0)),
        TraceRecord("short", dtype="f32", numel=8, values=np.array([0.5]), loader=lambda: b"\0" * 12),
        TraceRecord("lost", dtype="f32", numel=6, values=np.array([0.0]), loader=gone),
        TraceRecord("misshapen", dtype="f32", shape=(4,), numel=6, values=np.zeros(6), loader=arr.tobytes),
        TraceRecord("all_inline", numel=3, values=np.array([1.0, 2.0, 3.0])),
        TraceRecord("sketched", values=np.array([1.0]), sketch=np.r_[1.0, np.full(63, np.nan)]),
        TraceRecord("bare", location=Location("x.bin", offset=9)),
    ]  # fmt: skip
    assert _every_row_agrees([RecordBatch.from_records(records)]) == len(records)
