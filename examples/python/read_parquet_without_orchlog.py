"""Read one tensor out of an orchlog Parquet trace with pandas, Polars, DuckDB or pyarrow, without orchlog.

    python read_parquet_without_orchlog.py TRACE.parquet CHECKPOINT [TOKEN_IDX]

Each row holds the tensor's bytes (`data`, little-endian, C order), its
NumPy dtype (`tensor_dtype`: `<f4`, `<f2`, `|i1`, ...; bf16 is `bfloat16`,
which NumPy knows once `ml_dtypes` is imported) and its shape
(`tensor_shape`), so `np.frombuffer(data, dtype).reshape(shape)` is the
tensor in every tool.
"""

import sys

import duckdb
import ml_dtypes  # noqa: F401  (registers bfloat16 with NumPy)
import numpy as np
import pandas as pd
import polars as pl
import pyarrow.dataset as ds


def tensor(data: bytes, dtype: str, shape: list[int]) -> np.ndarray:
    x: np.ndarray = np.frombuffer(data, dtype=dtype).reshape(shape)
    return x


def with_pandas(path: str, checkpoint: str, token_idx: int | None = None) -> np.ndarray:
    filters = [("checkpoint", "==", checkpoint)] + ([("token_idx", "==", token_idx)] if token_idx is not None else [])
    row = pd.read_parquet(path, columns=["data", "tensor_dtype", "tensor_shape"], filters=filters).iloc[0]
    return tensor(row["data"], row["tensor_dtype"], row["tensor_shape"])


def with_polars(path: str, checkpoint: str, token_idx: int | None = None) -> np.ndarray:
    rows = pl.scan_parquet(path).filter(pl.col("checkpoint") == checkpoint)
    if token_idx is not None:
        rows = rows.filter(pl.col("token_idx") == token_idx)
    row = rows.select("data", "tensor_dtype", "tensor_shape").head(1).collect().row(0, named=True)
    return tensor(row["data"], row["tensor_dtype"], row["tensor_shape"])


def with_duckdb(path: str, checkpoint: str, token_idx: int | None = None) -> np.ndarray:
    row = duckdb.execute(
        "SELECT data, tensor_dtype, tensor_shape FROM read_parquet(?) "
        "WHERE checkpoint = ? AND (? IS NULL OR token_idx = ?) LIMIT 1",
        [path, checkpoint, token_idx, token_idx],
    ).fetchone()
    if row is None:
        raise LookupError(f"{path}: no {checkpoint} record")
    data, dtype, shape = row
    return tensor(data, dtype, shape)


def with_pyarrow(path: str, checkpoint: str, token_idx: int | None = None) -> np.ndarray:
    where = ds.field("checkpoint") == checkpoint
    if token_idx is not None:
        where = where & (ds.field("token_idx") == token_idx)
    table = ds.dataset(path).to_table(columns=["data", "tensor_dtype", "tensor_shape"], filter=where)
    row = table.slice(0, 1).to_pylist()[0]
    return tensor(row["data"], row["tensor_dtype"], row["tensor_shape"])


if __name__ == "__main__":
    path, checkpoint = sys.argv[1], sys.argv[2]
    token_idx = int(sys.argv[3]) if len(sys.argv) > 3 else None
    for read in (with_pandas, with_polars, with_duckdb, with_pyarrow):
        x = read(path, checkpoint, token_idx)
        print(f"{read.__name__}: {x.dtype} {x.shape} first {x.reshape(-1)[:4].tolist()}")
