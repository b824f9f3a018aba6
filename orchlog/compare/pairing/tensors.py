"""A record's whole tensor as a flat float array, from its bytes or from values that are all there."""

from __future__ import annotations

import numpy as np

from orchlog.encoding import dtypes
from orchlog.read import fields
from orchlog.read.batch import RecordBatch

NARROW_FLOATS = ("f32", "f16", "bf16")


def flat_tensor(batch: RecordBatch, i: int) -> np.ndarray | None:
    """f32 for f32/f16/bf16 tensors (exact), f64 for the rest; None when the tensor is not at hand.

    Bytes that disagree with the record (an unknown dtype, a length other than numel
    elements, numel other than the shape's) or that cannot be read off a damaged file
    are not at hand: the pair is graded on its summary, and `orchlog validate` says why."""
    dtype = batch.dtype[i]
    loader = batch.loader_of(i)
    raw = None
    if loader is not None and dtype is not None:
        try:
            raw = loader()
        except OSError:
            raw = None
        numel = None if batch.numel[i] < 0 else int(batch.numel[i])
        if raw is not None and not fields.data_fits(memoryview(raw).nbytes, dtype, numel, batch.shape_of(i)):
            raw = None
    if raw is not None and dtype is not None:  # raw is read only when the dtype is known
        flat = dtypes.from_bytes(raw, dtype)
        if dtype == "bf16":
            return dtypes.widen(flat, "bf16")
        if dtype == "f16":
            return flat.astype(np.float32)
        return flat if dtype in ("f32", "f64") else flat.astype(np.float64)
    if 0 <= batch.numel[i] == batch.val_off[i + 1] - batch.val_off[i]:
        values = batch.row_values(i)
        return values.astype(np.float32) if dtype in NARROW_FLOATS else values
    return None
