"""Alignment keys: parsing --key and turning records into rows of ids."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.compare.pairing.keys import Interner, key_matrix, parse_key
from orchlog.errors import OrchlogError
from orchlog.read.batch import RecordBatch
from orchlog.read.trace import TraceRecord


def test_key_text_becomes_field_names():
    assert parse_key(" checkpoint, token_idx ") == ("checkpoint", "token_idx")


@pytest.mark.parametrize("text", ["", "checkpoint,colour", "layer,layer"])
def test_bad_key_text_is_a_clear_error(text):
    with pytest.raises(OrchlogError, match="--key"):
        parse_key(text)


def test_strings_share_ids_across_batches_and_absent_values_are_minus_one():
    interner = Interner()
    one = RecordBatch.from_records([TraceRecord("a", layer=2), TraceRecord("b")])
    two = RecordBatch.from_records([TraceRecord("b", stage="s"), TraceRecord("a", layer=2)])
    k1, k2 = (key_matrix(b, ("checkpoint", "layer", "stage"), interner) for b in (one, two))
    assert k1[0].tolist() == k2[1].tolist()
    assert k1[1, 0] == k2[0, 0] and k1[1, 1] == -1 and k1[1, 2] == -1 and k2[0, 2] >= 0
    assert k1.dtype == np.int64
