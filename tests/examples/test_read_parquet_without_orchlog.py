"""A tensor of every dtype round-trips from a Parquet trace through pandas, Polars, DuckDB and pyarrow, no orchlog.

The trace is written by each of orchlog's Parquet writers (`orchlog pack` of a
binary stream, `orchlog.parquet.Writer`, `configure(format="parquet")`); a
separate Python process reads it with examples/python/read_parquet_without_orchlog.py
(the recipe docs/parquet.md shows) and must not import orchlog on the way.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import orchlog
from orchlog import schema_gen
from orchlog.encoding.record import RecordInput
from orchlog.parquet import Writer, pack, read
from tests.conftest import ROOT
from tests.tracegen import header, tensor_of, write_frames

EXAMPLE = ROOT / "examples/python/read_parquet_without_orchlog.py"
SHAPE = (3, 5)
TOOLS = ("with_pandas", "with_polars", "with_duckdb", "with_pyarrow")
# Runs in a process of its own: reads every (checkpoint, token) with every tool, prints each
# tensor as JSON, and fails if anything imported orchlog.
_READER = f"""
import json, runpy, sys
recipe = runpy.run_path({str(EXAMPLE)!r})
for checkpoint, token in json.loads(sys.argv[2]):
    for tool in {TOOLS!r}:
        x = recipe[tool](sys.argv[1], checkpoint, token)
        print(json.dumps([tool, checkpoint, token, str(x.dtype), list(x.shape), x.tobytes().hex()]))
assert not [m for m in sys.modules if m.split(".")[0] == "orchlog"], "the recipe imported orchlog"
"""


def _tensors(seed: int) -> dict[tuple[str, int], tuple[str, bytes]]:
    """(checkpoint, token) -> (dtype, bytes): two tensors of random bits per dtype (NaNs and infinities included)."""
    rng = np.random.default_rng(seed)
    out = {}
    for dtype in schema_gen.DTYPES:
        for token in (0, 1):
            out[f"t_{dtype}", token] = (dtype, rng.bytes(int(np.prod(SHAPE)) * schema_gen.DTYPE_SIZES[dtype]))
    return out


def _array(dtype: str, data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=schema_gen.DTYPE_NUMPY[dtype]).reshape(SHAPE)


def _by_pack(path, tensors) -> None:
    recs = [
        RecordInput(checkpoint=cp, dtype=dtype, shape=SHAPE, data=data, token_idx=token, seq=i)
        for i, ((cp, token), (dtype, data)) in enumerate(tensors.items())
    ]
    assert pack([write_frames(path.with_suffix(".bin"), recs, header())], path)


def _by_writer(path, tensors) -> None:
    with Writer(path) as w:
        for (cp, token), (dtype, data) in tensors.items():
            w.log(cp, _array(dtype, data), dtype=dtype, token_idx=token)


def _by_configure(path, tensors) -> None:
    assert orchlog.configure(format="parquet", path=str(path))
    try:
        for (cp, token), (dtype, data) in tensors.items():
            assert orchlog.log(cp, _array(dtype, data), token, dtype=dtype)
    finally:
        orchlog.close()


@pytest.mark.parametrize("write", [_by_pack, _by_writer, _by_configure], ids=["pack", "Writer", "configure"])
def test_every_dtype_reads_back_exactly_with_every_tool_and_no_orchlog(tmp_path, write):
    tensors = _tensors(seed=len(write.__name__))
    path = tmp_path / "trace.parquet"
    write(path, tensors)
    keys = json.dumps(list(tensors))
    proc = subprocess.run(
        [sys.executable, "-c", _READER, str(path), keys], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    seen = set()
    for line in proc.stdout.splitlines():
        tool, cp, token, dtype_text, shape, hex_bytes = json.loads(line)
        dtype, data = tensors[cp, token]
        assert dtype_text == np.dtype(schema_gen.DTYPE_PARQUET[dtype]).name, (tool, dtype)
        assert tuple(shape) == SHAPE and bytes.fromhex(hex_bytes) == data, (tool, dtype)
        seen.add((tool, cp, token))
    assert len(seen) == len(TOOLS) * len(tensors)


@pytest.mark.parametrize("dtype", schema_gen.DTYPES)
def test_the_spelling_in_the_file_is_the_dtype_numpy_and_orchlog_agree_on(tmp_path, dtype):
    """np.frombuffer(data, spelling) gives the numbers orchlog's own reader gives (bf16: via ml_dtypes)."""
    data = np.random.default_rng(7).bytes(64 * schema_gen.DTYPE_SIZES[dtype])
    with Writer(tmp_path / "t.parquet") as w:
        w.log("x", np.frombuffer(data, schema_gen.DTYPE_NUMPY[dtype]), dtype=dtype)
    (rec,) = read(tmp_path / "t.parquet")
    spelling = schema_gen.DTYPE_PARQUET[dtype]
    theirs = np.frombuffer(data, dtype=spelling)
    assert theirs.dtype == (ml_dtypes.bfloat16 if dtype == "bf16" else np.dtype(schema_gen.DTYPE_NUMPY[dtype]))
    np.testing.assert_array_equal(theirs.astype(tensor_of(rec).dtype), tensor_of(rec))


def test_docs_show_the_example_file_as_it_is():
    text = (ROOT / "docs/parquet.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert EXAMPLE.read_text(encoding="utf-8") in blocks


def test_the_example_prints_one_tensor_per_tool(tmp_path):
    path = tmp_path / "trace.parquet"
    _by_writer(path, _tensors(seed=3))
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), str(path), "t_bf16", "1"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == list(TOOLS)
    assert all(" bfloat16 (3, 5) first " in line for line in lines)
