"""Every tensor in a Parquet trace can be re-hashed against its blake3; a changed byte is found at its row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from orchlog.parquet import read
from orchlog.parquet.packing import tensor_problems
from tests.tracegen import record, write_parquet


def _problems(path) -> list[str]:
    return [f"{rec.location}: {p}" for rec in read(path) if rec.has_data for p in tensor_problems(rec, rec.raw_bytes())]


def test_every_tensor_written_hashes_to_its_blake3(tmp_path):
    rng = np.random.default_rng(0)
    recs = [record(f"c{i}", rng.standard_normal((i + 1, 7)).astype(np.float16)) for i in range(10)]
    assert _problems(write_parquet(tmp_path / "t.parquet", recs)) == []


def test_a_changed_tensor_byte_is_found_at_its_row(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", [record(f"c{i}", np.full(8, i, np.float32)) for i in range(3)])
    table = pq.read_table(path)
    data = table.column("data").to_pylist()
    data[1] = data[1][:-1] + b"\x01"
    tampered = table.set_column(
        table.schema.get_field_index("data"), table.schema.field("data"), pa.array(data, pa.large_binary())
    )
    pq.write_table(tampered, path)
    (problem,) = _problems(path)
    assert problem.startswith(f"{path}#row1: blake3 mismatch")


def test_a_tensor_of_the_wrong_length_is_found(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", [record("c", np.ones(4, np.float32))])
    table = pq.read_table(path)
    short = table.set_column(
        table.schema.get_field_index("data"), table.schema.field("data"), pa.array([b"\x00" * 12], pa.large_binary())
    )
    pq.write_table(short, path)
    assert [p.split(": ", 1)[1] for p in _problems(path)][0] == "tensor has 12 bytes, but 4 f32 elements need 16"
