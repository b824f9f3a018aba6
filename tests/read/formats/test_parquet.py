"""The Parquet format is found by its PAR1 magic, whatever the file is called."""

from __future__ import annotations

import numpy as np

from orchlog import SCHEMA_VERSION
from orchlog.read.formats import detect
from orchlog.read.paths import open_trace
from tests.tracegen import record, write_frames, write_parquet


def test_open_trace_finds_parquet_by_content_whatever_the_name(tmp_path):
    path = write_parquet(tmp_path / "trace.bin", [record("a", np.arange(4, dtype=np.float32), layer=1)])
    trace = open_trace(path)
    (rec,) = list(trace)
    assert trace.header is not None
    assert detect(path).name == trace.format == "orchlog-parquet" and trace.header["orchlog"] == SCHEMA_VERSION
    assert rec.layer == 1 and str(rec.location) == f"{path}#row0"
    tensor = rec.tensor()
    assert tensor is not None and tensor.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_other_formats_are_not_taken_for_parquet(tmp_path):
    stream = write_frames(tmp_path / "t.parquet", [record("a", np.ones(2, np.float32))])
    assert detect(stream).name == "orchlog-binary"
