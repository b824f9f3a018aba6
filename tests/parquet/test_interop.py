"""A packed trace opens as it is in DuckDB, pandas and Polars, and their answers agree with orchlog's."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest

from orchlog import SCHEMA_VERSION
from orchlog.parquet import pack, read
from tests.tracegen import header, raw_of, record, write_frames


@pytest.fixture
def packed(tmp_path):
    """Two ranks, 3 tokens x 4 layers x 2 checkpoints each, packed from binary streams."""
    rng = np.random.default_rng(1)
    inputs = []
    for rank in (0, 1):
        recs = [
            record(
                cp,
                (rng.standard_normal(96) * (1 + layer)).astype(np.float32),
                token_idx=t,
                layer=layer,
                step=t,
                rank=rank,
                world_size=2,
                seq=i,
                meta={"shard": rank},
            )
            for i, (t, layer, cp) in enumerate(
                (t, layer, cp) for t in range(3) for layer in range(4) for cp in ("attn_norm", "ffn_out")
            )
        ]
        inputs.append(write_frames(tmp_path / f"rank{rank}.bin", recs, header(rank=rank, world_size=2)))
    pack(inputs, tmp_path / "trace.parquet")
    return tmp_path / "trace.parquet"


def test_duckdb_sql_gives_the_rms_per_layer_that_orchlog_reads(packed):
    rows = duckdb.execute(f"""
        SELECT layer, avg(rms) AS mean_rms, count(*) AS n
        FROM read_parquet('{packed}')
        WHERE checkpoint = 'attn_norm' AND tp_rank = 0
        GROUP BY layer ORDER BY layer
    """).fetchall()
    expected: dict[int | None, list[float]] = {}
    for rec in read(packed, checkpoint="attn_norm", rank=0):
        assert rec.stats is not None and rec.stats.rms is not None
        expected.setdefault(rec.layer, []).append(rec.stats.rms)
    assert [(layer, n) for layer, _, n in rows] == [(layer, len(expected[layer])) for layer in range(4)]
    for layer, mean_rms, _ in rows:
        assert mean_rms == pytest.approx(np.mean(expected[layer]), rel=1e-12)


def test_duckdb_reads_tensor_bytes_and_the_footer_headers(packed):
    ((blob, dtype),) = duckdb.execute(
        f"SELECT data, tensor_dtype FROM read_parquet('{packed}') WHERE tp_rank = 1 AND layer = 2 "
        "AND token_idx = 1 AND checkpoint = 'ffn_out'"
    ).fetchall()
    (rec,) = list(read(packed, rank=1, layer=2, token_idx=1, checkpoint="ffn_out"))
    np.testing.assert_array_equal(np.frombuffer(blob, dtype=dtype), rec.tensor())
    kv = dict(duckdb.execute(f"SELECT decode(key), decode(value) FROM parquet_kv_metadata('{packed}')").fetchall())
    assert [h["rank"] for h in json.loads(kv["orchlog.headers"])] == [0, 1]
    assert kv["orchlog.schema_version"] == str(SCHEMA_VERSION) and kv["orchlog.parquet_layout"] == "2"
    assert kv["orchlog.byte_order"] == "little"


def test_pandas_reads_the_rows_with_their_types(packed):
    df = pd.read_parquet(packed)
    assert len(df) == 48 and list(df.columns[:3]) == ["checkpoint", "team", "token_idx"]
    first = df.iloc[0]
    assert first.tensor_shape.tolist() == [96] and isinstance(first.data, bytes) and first.tensor_dtype == "<f4"
    assert dict(first.meta) == {"shard": "0"} and len(first.first_values) == 10
    assert df.groupby("tp_rank")["seq"].max().tolist() == [23, 23]
    assert df.tensor_min.le(df.tensor_max).all() and df.values.shape == (48, len(df.columns))


def test_polars_reads_and_filters_lazily(packed):
    out = (
        pl.scan_parquet(packed)
        .filter((pl.col("layer") == 3) & (pl.col("checkpoint") == "ffn_out"))
        .select("tp_rank", "token_idx", "abs_max", "data")
        .collect()
    )
    assert out.height == 6 and out.schema["data"] == pl.Binary
    by_key = {(r.rank, r.token_idx): r for r in read(packed, layer=3, checkpoint="ffn_out")}
    for rank, token, abs_max, data in out.iter_rows():
        rec = by_key[rank, token]
        assert rec.stats is not None and abs_max == rec.stats.abs_max
        assert data == bytes(raw_of(rec))
