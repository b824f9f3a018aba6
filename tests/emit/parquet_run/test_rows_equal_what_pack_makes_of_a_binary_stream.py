"""orchlog.configure(format="parquet") writes the rows `orchlog pack` makes of a binary stream of the same calls.

Both runs log the cross-language tensors (every dtype, NaN and Inf, empty
and 0-d tensors, null and out-of-range keys, meta of every type) through
`orchlog.log`; one as a full-mode binary stream packed afterwards, one
straight to Parquet. Every column of every row is equal.
"""

from __future__ import annotations

import json
import math

import pyarrow.parquet as pq
import pytest

import orchlog
from orchlog.emit import api as emitter
from orchlog.parquet import pack
from tests.crosslang.python_producer import log_tensor
from tests.crosslang.reference import TENSORS
from tests.vectors_io import meta_from_json

DOC = json.loads(TENSORS.read_text(encoding="utf-8"))


def _log_every_tensor(**options) -> None:
    assert orchlog.configure(
        team="crosslang",
        select="",
        rank=1,
        world_size=2,
        model="m",
        git_commit="",
        config=meta_from_json(DOC["config"]),
        **options,
    )
    for tensor in DOC["tensors"]:
        log_tensor(tensor)
    emitter.close()


def _rows(path) -> list[dict]:
    def same_nan(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, list):
            return [same_nan(x) for x in v]
        return v

    return [{k: same_nan(v) for k, v in row.items()} for row in pq.read_table(path).to_pylist()]


@pytest.mark.parametrize("values", [10, "all", 0])
def test_every_row_equals_the_packed_binary_stream(values, tmp_path):
    _log_every_tensor(path=str(tmp_path / "run.bin"), mode="full", values=values)
    assert pack([tmp_path / "run.bin"], tmp_path / "packed.parquet")
    _log_every_tensor(path=str(tmp_path / "direct.parquet"), format="parquet", values=values)

    direct, packed = _rows(tmp_path / "direct.parquet"), _rows(tmp_path / "packed.parquet")
    assert len(direct) == len(DOC["tensors"])
    for i, (d, p) in enumerate(zip(direct, packed)):
        assert d == p, f"row {i} ({d['checkpoint']!r}) differs in {[k for k in d if d[k] != p[k]]}"
    assert len(direct) == len(packed)


def test_the_run_header_is_the_one_the_binary_stream_carries_but_for_its_time(tmp_path):
    _log_every_tensor(path=str(tmp_path / "run.bin"), mode="full")
    _log_every_tensor(path=str(tmp_path / "direct.parquet"), format="parquet")
    (direct,) = orchlog.open_trace(tmp_path / "direct.parquet").headers
    stream = orchlog.open_trace(tmp_path / "run.bin")
    next(iter(stream))
    assert stream.header is not None
    assert {**direct, "created": None} == {**stream.header, "created": None}
