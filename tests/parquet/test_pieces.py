"""Parquet written piece by piece: a standard file when closed, one owner per path, FIFOs without hangs."""

from __future__ import annotations

import os
import threading

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from orchlog.parquet import Writer, read


def _log(w: Writer, rows: range) -> None:
    for i in rows:
        w.log("h", np.full(256, i, np.float32), token_idx=i)


def test_a_closed_file_is_standard_parquet_for_pyarrow_and_duckdb(tmp_path):
    path = tmp_path / "t.parquet"
    with Writer(path, row_group_bytes=4096) as w:
        _log(w, range(20))
    assert pq.ParquetFile(path).metadata.num_row_groups > 3
    assert duckdb.execute(f"SELECT count(*), sum(token_idx) FROM '{path}'").fetchall() == [(20, 190)]
    assert [r.token_idx for r in read(path)] == list(range(20))


def test_a_second_writer_on_the_same_path_is_refused_and_the_first_keeps_its_rows(tmp_path):
    path = tmp_path / "t.parquet"
    with Writer(path, row_group_bytes=4096) as first:
        _log(first, range(10))
        with pytest.raises(OSError, match="being written by another process"):
            Writer(path)
        _log(first, range(10, 20))
    assert [r.token_idx for r in read(path)] == list(range(20))


def test_a_fifo_with_no_reader_is_an_error_at_once_and_with_one_the_rows_flow_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        Writer(fifo)  # no reader: opening would block; it fails instead
    received = tmp_path / "received.parquet"

    def drain() -> None:
        with open(fifo, "rb") as src, open(received, "wb") as dst:
            dst.write(src.read())

    reader = threading.Thread(target=drain)
    reader.start()
    fd = os.open(fifo, os.O_WRONLY)  # keeps the FIFO open for writing until the Writer has it
    try:
        with Writer(fifo, row_group_bytes=4096) as w:
            _log(w, range(12))
    finally:
        os.close(fd)
        reader.join(timeout=60)
    assert [r.token_idx for r in read(received)] == list(range(12))
