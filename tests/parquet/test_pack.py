"""pack: binary streams and JSONL summaries become one Parquet trace, every row and byte kept."""

from __future__ import annotations

import gzip

import blake3
import numpy as np
import pyarrow.parquet as pq
import pytest

from orchlog import schema_gen
from orchlog.errors import OrchlogError
from orchlog.parquet import pack, read
from orchlog.read.paths import open_trace
from tests.tracegen import header, raw_of, record, tensor_of, write_frames, write_jsonl


def _rank_records(rank: int, n: int = 6):
    rng = np.random.default_rng(rank)
    return [
        record(
            f"blk{i % 3}",
            rng.standard_normal((2, 40)).astype(np.float32),
            rank=rank,
            world_size=2,
            seq=i,
            layer=i % 2,
            token_idx=i // 2,
            step=0,
            meta={"shard": rank},
        )
        for i in range(n)
    ]


def test_a_binary_stream_packs_to_rows_with_the_same_fields_and_bytes(tmp_path):
    stream = write_frames(tmp_path / "r0.bin", _rank_records(0))
    result = pack([stream], tmp_path / "out.parquet")
    assert result and result.records == result.tensors == 6 and result.tensor_bytes == 6 * 80 * 4
    packed, original = list(read(tmp_path / "out.parquet")), list(open_trace(stream))
    for p, o in zip(packed, original, strict=True):
        for field in (*schema_gen.KEY_FIELDS, "dtype", "shape", "numel", "blake3", "meta"):
            assert getattr(p, field) == getattr(o, field), field
        assert vars(p.stats) == vars(o.stats)
        np.testing.assert_array_equal(p.values, o.values)
        p_raw, o_raw = p.raw_bytes(), o.raw_bytes()
        assert p_raw is not None and o_raw is not None and bytes(p_raw) == bytes(o_raw)


def test_several_ranks_become_one_trace_with_rank_and_every_header_kept(tmp_path):
    inputs = [write_frames(tmp_path / f"r{r}.bin", _rank_records(r), header(rank=r, world_size=2)) for r in (0, 1)]
    pack(inputs, tmp_path / "out.parquet")
    trace = read(tmp_path / "out.parquet")
    recs = list(trace)
    assert [r.rank for r in recs] == [0] * 6 + [1] * 6
    assert [h["rank"] for h in trace.headers] == [0, 1]
    assert [r.rank for r in read(tmp_path / "out.parquet", rank=1)] == [1] * 6


def test_jsonl_summaries_pack_to_rows_without_tensor_bytes(tmp_path):
    summary = write_jsonl(tmp_path / "s.jsonl", _rank_records(0, 3))
    stream = write_frames(tmp_path / "r1.bin", _rank_records(1, 2))
    result = pack([summary, stream], tmp_path / "out.parquet")
    assert result.records == 5 and result.tensors == 2
    recs = list(read(tmp_path / "out.parquet"))
    assert [r.has_data for r in recs] == [False] * 3 + [True] * 2
    assert recs[0].stats is not None
    assert recs[0].values is not None
    assert recs[0].raw_bytes() is None and recs[0].stats is not None and len(recs[0].values) == 10
    table = pq.read_table(tmp_path / "out.parquet", columns=["data"])
    assert table.column("data").null_count == 3
    meta = pq.ParquetFile(tmp_path / "out.parquet").metadata
    assert meta.num_row_groups == 2, "each input starts a row group of its own"


def test_gzipped_streams_pack_like_plain_ones(tmp_path):
    stream = write_frames(tmp_path / "r0.bin", _rank_records(0))
    gz = tmp_path / "r0.bin.gz"
    gz.write_bytes(gzip.compress(stream.read_bytes()))
    pack([gz], tmp_path / "out.parquet")
    assert [blake3.blake3(raw_of(r)).hexdigest() == r.blake3 for r in read(tmp_path / "out.parquet")] == [True] * 6


def test_large_tensors_span_row_groups_of_the_requested_size(tmp_path):
    big = [record("x", np.full(64 * 1024, i, np.float32), seq=i) for i in range(12)]  # 256 KiB each
    stream = write_frames(tmp_path / "big.bin", big)
    pack([stream], tmp_path / "out.parquet", row_group_bytes=1 << 20)
    meta = pq.ParquetFile(tmp_path / "out.parquet").metadata
    assert meta.num_row_groups == 3 and all(meta.row_group(i).num_rows == 4 for i in range(3))
    assert [tensor_of(r)[0] for r in read(tmp_path / "out.parquet")] == list(range(12))


@pytest.mark.parametrize("codec", ["zstd", "lz4", "snappy", "none"])
def test_every_codec_packs_the_same_rows(tmp_path, codec):
    stream = write_frames(tmp_path / "r0.bin", _rank_records(0))
    pack([stream], tmp_path / "out.parquet", codec=codec)
    assert (
        pq.ParquetFile(tmp_path / "out.parquet").metadata.row_group(0).column(0).compression
        == {"zstd": "ZSTD", "lz4": "LZ4", "snappy": "SNAPPY", "none": "UNCOMPRESSED"}[codec]
    )
    assert len(list(read(tmp_path / "out.parquet"))) == 6


def test_bad_paths_are_refused_before_anything_is_written(tmp_path):
    stream = write_frames(tmp_path / "r0.bin", _rank_records(0))
    with pytest.raises(OrchlogError, match="nothing to pack"):
        pack([], tmp_path / "out.parquet")
    with pytest.raises(OrchlogError, match="is also an input"):
        pack([stream], stream)
    with pytest.raises(OrchlogError, match="not a directory"):
        pack([stream], tmp_path / "missing" / "out.parquet")
    with pytest.raises(OrchlogError, match="does not exist"):
        pack([tmp_path / "nope.bin"], tmp_path / "out.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r0.bin"]


def test_parquet_traces_pack_too_so_ranks_packed_apart_can_be_merged(tmp_path):
    parts = []
    for r in (0, 1):
        parts.append(tmp_path / f"r{r}.parquet")
        pack([write_frames(tmp_path / f"r{r}.bin", _rank_records(r), header(rank=r))], parts[-1])
    result = pack(parts, tmp_path / "merged.parquet")
    assert result and result.tensors == 12
    merged = list(read(tmp_path / "merged.parquet"))
    assert [r.rank for r in merged] == [0] * 6 + [1] * 6
    assert all(blake3.blake3(raw_of(r)).hexdigest() == r.blake3 for r in merged)
