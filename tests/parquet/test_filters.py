"""Selections: keywords, ranges, lists, globs and selector text mean what the selector grammar says."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from orchlog.errors import OrchlogError
from orchlog.parquet.filters import selection
from orchlog.parquet.schema import COLUMN_OF

TABLE = pa.table(
    {
        "checkpoint": ["attn_norm", "attn_out", "ffn_out", "logits", None],
        "layer": pa.array([0, 1, 2, None, 3], pa.int32()),
        "token_idx": pa.array([5, 5, 6, 7, None], pa.int64()),
        COLUMN_OF["rank"]: pa.array([0, 0, 1, 1, 0], pa.int32()),
    }
)


def _kept(**kw) -> list[int]:
    table = TABLE.append_column("i", pa.array(range(TABLE.num_rows)))
    return selection(**kw).apply(table).column("i").to_pylist()


def test_no_selection_keeps_everything():
    assert selection().selects_all and _kept() == [0, 1, 2, 3, 4]


def test_values_lists_and_ranges_select_on_key_fields():
    assert _kept(layer=1) == [1]
    assert _kept(layer=[0, 2]) == [0, 2]
    assert _kept(layer=range(1, 3)) == [1, 2]
    assert _kept(token_idx=5, rank=0) == [0, 1]


def test_a_null_field_never_matches_a_condition_on_it():
    assert _kept(layer=range(0, 100)) == [0, 1, 2, 4]
    assert _kept(checkpoint="*") == [0, 1, 2, 3]


def test_globs_match_whole_names():
    assert _kept(checkpoint="attn_*") == [0, 1]
    assert _kept(checkpoint=["logits", "ffn_?ut"]) == [2, 3]
    assert _kept(checkpoint="attn") == []


def test_selector_text_means_what_it_means_to_an_emitter():
    assert _kept(where="layer=0-1,checkpoint=attn_*") == [0, 1]
    assert _kept(where="layer=2-") == [2, 4]
    assert _kept(where="token=5,token=7") == [0, 1, 3]
    assert _kept(where="checkpoint=attn_*", checkpoint="*out") == [1], "where and keywords are AND-ed"


def test_a_raw_pyarrow_expression_is_anded_with_the_rest():
    assert _kept(filter=ds.field(COLUMN_OF["rank"]) == 1, token_idx=range(0, 7)) == [2]


def test_mistakes_are_clear_errors():
    with pytest.raises(OrchlogError, match="invalid selection"):
        selection(where="layer=three")
    with pytest.raises(OrchlogError, match="cannot select on 'dtype'"):
        selection(dtype="f32")
    with pytest.raises(OrchlogError, match="step 1"):
        selection(layer=range(0, 10, 2))
