"""Column names that pandas and Polars users can write as attributes, and a footer that states the layout.

`row.dtype` on a pandas row is the row's own dtype, `df.values` the frame's
array, `df.min` a method: a column of such a name cannot be reached the way
users reach the others, and silently gives something else.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from orchlog import schema_gen
from orchlog.parquet.schema import COLUMN_OF, COLUMNS
from tests.tracegen import record, write_parquet

FRAMES = {"pandas.DataFrame": pd.DataFrame, "pandas.Series": pd.Series, "polars.DataFrame": pl.DataFrame}
FRAMES |= {"polars.Series": pl.Series, "polars.LazyFrame": pl.LazyFrame}


@pytest.mark.parametrize("column", COLUMNS)
def test_no_column_is_an_attribute_of_a_pandas_or_polars_frame_or_row(column):
    assert [name for name, cls in FRAMES.items() if hasattr(cls, column)] == []


def test_the_fields_that_would_shadow_one_have_columns_of_their_own_names():
    renamed = {field: column for field, column in COLUMN_OF.items() if column != field}
    assert renamed == {
        "rank": "tp_rank",
        "dtype": "tensor_dtype",
        "shape": "tensor_shape",
        "values": "first_values",
        "min": "tensor_min",
        "max": "tensor_max",
        "mean": "tensor_mean",
    }
    assert all(any(hasattr(cls, field) for cls in FRAMES.values()) for field in renamed)


def test_the_footer_states_the_layout_version_and_the_byte_order(tmp_path):
    path = write_parquet(tmp_path / "t.parquet", [record("a", np.ones(3, np.float32))])
    kv = pq.ParquetFile(path).metadata.metadata
    assert kv[schema_gen.PARQUET_LAYOUT_KEY.encode()] == str(schema_gen.PARQUET_LAYOUT_VERSION).encode() == b"2"
    assert kv[schema_gen.PARQUET_BYTE_ORDER_KEY.encode()] == b"little"
    assert kv[schema_gen.PARQUET_SCHEMA_VERSION_KEY.encode()] == str(schema_gen.SCHEMA_VERSION).encode()
