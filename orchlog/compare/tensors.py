"""A record's whole tensor as a flat float array, from its bytes or from values that are all there."""

from __future__ import annotations

import numpy as np

from orchlog.encoding import dtypes
from orchlog.read.batch import RecordBatch

NARROW_FLOATS = ("f32", "f16", "bf16")


def flat_tensor(batch: RecordBatch, i: int) -> np.ndarray | None:
    """f32 for f32/f16/bf16 tensors (exact), f64 for the rest; None when the tensor is not at hand."""
    dtype = batch.dtype[i]
    loader = batch.loader_of(i)
    if loader is not None and dtype is not None:
        flat = dtypes.from_bytes(loader(), dtype)
        if dtype == "bf16":
            return dtypes.widen(flat, "bf16")
        if dtype == "f16":
            return flat.astype(np.float32)
        return flat if dtype in ("f32", "f64") else flat.astype(np.float64)
    if 0 <= batch.numel[i] == batch.val_off[i + 1] - batch.val_off[i]:
        values = batch.row_values(i)
        return values.astype(np.float32) if dtype in NARROW_FLOATS else values
    return None
