"""Writer: tensors logged from Python become rows with the canonical summary and the full bytes."""

from __future__ import annotations

import threading

import blake3
import numpy as np
import pyarrow.parquet as pq
import pytest

from orchlog.encoding import stats as canonical_stats
from orchlog.encoding.record import encode_record
from orchlog.parquet import Writer, read
from orchlog.parquet.writer import RowGroupSink
from tests.tracegen import raw_of, record, tensor_of


def test_logged_tensors_read_back_with_canonical_fields(tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    with Writer(tmp_path / "t.parquet", team="ours", rank=1, world_size=2, values=4) as w:
        w.log("attn_norm", x, token_idx=5, layer=3, stage="mul_mat", step=0, meta={"kv_aligned": 1})
    (rec,) = list(read(tmp_path / "t.parquet"))
    reference = encode_record(
        record(
            "attn_norm",
            x,
            team="ours",
            rank=1,
            world_size=2,
            values=4,
            token_idx=5,
            layer=3,
            stage="mul_mat",
            step=0,
            meta={"kv_aligned": 1},
        )
    )
    assert rec.blake3 == reference.blake3 == blake3.blake3(x.tobytes()).hexdigest()
    assert (rec.team, rec.rank, rec.world_size, rec.token_idx, rec.layer, rec.stage, rec.step, rec.seq) == (
        "ours",
        1,
        2,
        5,
        3,
        "mul_mat",
        0,
        0,
    )
    assert rec.values is not None
    assert rec.values.tolist() == x.reshape(-1)[:4].astype(np.float64).tolist()
    assert vars(rec.stats) == vars(canonical_stats.compute(x.tobytes(), "f32"))
    assert rec.meta == {"kv_aligned": 1}
    np.testing.assert_array_equal(rec.tensor(), x)


def test_every_dtype_and_shape_round_trips_exactly(tmp_path):
    arrays = [
        np.float32(2.5).reshape(()),
        np.zeros((0, 4), np.float16),
        np.arange(7, dtype=np.int8),
        np.arange(5, dtype=np.uint8),
        np.arange(3, dtype=np.int32),
        np.array([2**62, -5], np.int64),
        np.array([1e300, -0.0], np.float64),
        np.arange(6, dtype=np.float32).reshape(2, 3).T,
    ]
    with Writer(tmp_path / "t.parquet") as w:
        for i, a in enumerate(arrays):
            w.log(f"c{i}", a)
        w.log("bf16", np.array([0x3F80, 0xC000], np.uint16), dtype="bf16")
    recs = list(read(tmp_path / "t.parquet"))
    for rec, a in zip(recs, arrays):
        assert rec.shape == a.shape
        np.testing.assert_array_equal(rec.tensor(), a)
    assert recs[-1].dtype == "bf16" and tensor_of(recs[-1]).tolist() == [1.0, -2.0]


def test_big_endian_input_is_stored_little_endian(tmp_path):
    x = np.arange(4, dtype=">f4")
    with Writer(tmp_path / "t.parquet") as w:
        w.log("be", x)
    (rec,) = list(read(tmp_path / "t.parquet"))
    assert bytes(raw_of(rec)) == x.astype("<f4").tobytes()


def test_the_caller_may_reuse_its_buffer_as_soon_as_log_returns(tmp_path):
    buf = np.ones(16, np.float32)
    with Writer(tmp_path / "t.parquet") as w:
        w.log("a", buf)
        buf[:] = 7
        w.log("b", buf)
    a, b = list(read(tmp_path / "t.parquet"))
    assert tensor_of(a).tolist() == [1.0] * 16 and tensor_of(b).tolist() == [7.0] * 16


def test_row_groups_are_bounded_by_row_group_bytes(tmp_path):
    with Writer(tmp_path / "t.parquet", row_group_bytes=64 * 1024) as w:
        for i in range(40):
            w.log("x", np.full(4096, i, np.float32))  # 16 KiB each
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    assert meta.num_rows == 40 and meta.num_row_groups == 10
    assert all(meta.row_group(i).num_rows == 4 for i in range(meta.num_row_groups))


def test_seq_is_the_order_of_rows_when_threads_log_at_once(tmp_path):
    with Writer(tmp_path / "t.parquet", row_group_bytes=4096) as w:

        def work(t):
            for i in range(50):
                w.log(f"thread{t}", np.full(64, i, np.float32), token_idx=i)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    recs = list(read(tmp_path / "t.parquet"))
    assert [r.seq for r in recs] == list(range(200))
    for n in range(4):
        assert [r.token_idx for r in recs if r.checkpoint == f"thread{n}"] == list(range(50))


def test_a_closed_writer_refuses_rows_and_closing_twice_is_harmless(tmp_path):
    w = Writer(tmp_path / "t.parquet")
    w.close()
    w.close()
    assert w.closed
    with pytest.raises(ValueError, match="closed"):
        w.log("late", np.zeros(1, np.float32))


@pytest.mark.parametrize("durable", [False, True])
def test_a_row_group_sink_closed_twice_writes_its_footer_once(tmp_path, durable):
    sink = RowGroupSink(tmp_path / "t.parquet", [{"run": "r"}], durable=durable)
    sink.close()
    size = (tmp_path / "t.parquet").stat().st_size
    sink.close()
    assert (tmp_path / "t.parquet").stat().st_size == size
    assert pq.ParquetFile(tmp_path / "t.parquet").metadata.num_rows == 0


def test_an_unsupported_dtype_is_a_clear_error(tmp_path):
    with Writer(tmp_path / "t.parquet") as w, pytest.raises(ValueError, match="cannot log a complex64"):
        w.log("z", np.zeros(2, np.complex64))


def test_tensor_bytes_carry_no_statistics_and_the_footer_counts_rows_without_them(tmp_path):
    import json

    from orchlog.parquet.schema import DATA_NULLS_KEY
    from tests.tracegen import write_parquet

    path = write_parquet(
        tmp_path / "t.parquet", [record("a", np.ones(4, np.float32)), record("b", np.ones(2, np.float32))]
    )
    meta = pq.ParquetFile(path).metadata
    data = [
        meta.row_group(0).column(i)
        for i in range(meta.num_columns)
        if meta.row_group(0).column(i).path_in_schema == "data"
    ]
    assert data[0].statistics is None
    assert json.loads(meta.metadata[DATA_NULLS_KEY.encode()]) == [0]
