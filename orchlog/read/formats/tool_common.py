"""What the readers of other tools' dumps share: the header that names the tool, records over lazily
loaded tensors, and the split of a [batch, tokens, ...] tensor into one record per token.

Every such reader gives its trace one header, `tool_header(...)`: `tool` (the
tool's name), `holds` (what its dump holds, in words), and a `producer` like
an orchlog header's, so that `orchlog show` and Parquet's footer name where
the records came from. Nothing downstream reads these keys to decide
anything: a dump's records are records.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.read.files import open_file, read_at_most
from orchlog.read.formats import open_binary
from orchlog.read.formats.lines import loads_line
from orchlog.read.module_paths import layer_of
from orchlog.read.safetensors_file import SafeTensor
from orchlog.read.torch_file import TensorRef
from orchlog.read.trace import Location, Trace, TraceRecord
from orchlog.schema_gen import DTYPE_NUMPY, DTYPE_SIZES, LIBRARY_VERSION, SCHEMA_VERSION

__all__ = ["layer_of", "open_file", "tool_header", "tensor_record", "token_records", "ArrayLoader"]


MAX_DOCUMENT = 1 << 30  # a tool's JSON document is read whole


def read_document(trace: Trace, what: str) -> Any:
    """The JSON document a tool wrote (a debugger tree, a dump.json), read whole; None, said as fatal on the
    trace, when it is larger than MAX_DOCUMENT or not JSON."""
    with open_binary(Path(trace.path)) as f:
        raw = read_at_most(f, MAX_DOCUMENT + 1)
    trace.bytes_read = trace.size or len(raw)
    where = Location(trace.path)
    if len(raw) > MAX_DOCUMENT:
        trace.report(where, f"{what} of more than {MAX_DOCUMENT >> 20} MiB; not read", fatal=True)
        return None
    try:
        return loads_line(raw)
    except ValueError as exc:
        trace.report(where, f"malformed JSON ({exc}); not read", fatal=True)
        return None


def tool_header(tool: str, holds: str, *, language: str = "python", **config: Any) -> dict[str, Any]:
    """The header of a trace read from another tool's dump."""
    return {
        "orchlog": SCHEMA_VERSION,  # the records are schema records, whatever wrote the dump
        "tool": tool,
        "holds": holds,
        "producer": {"name": tool, "version": "unknown", "language": language},
        "team": tool,
        "config": {"read_by": f"orchlog {LIBRARY_VERSION}", **{k: v for k, v in config.items() if v is not None}},
    }


class ArrayLoader:
    """Tensor bytes from an array made on demand (a row of a tensor, a decoded blob): `nbytes` is known
    before the bytes are made, as `orchlog pack` wants."""

    __slots__ = ("make", "nbytes")

    def __init__(self, make: Callable[[], np.ndarray], nbytes: int) -> None:
        self.make, self.nbytes = make, nbytes

    def __call__(self) -> bytes:
        try:
            data = np.ascontiguousarray(self.make()).tobytes()
        except (ValueError, TypeError, EOFError) as exc:  # a blob that decodes to less than its header says
            raise OSError(f"the tensor cannot be decoded ({exc})") from None
        if len(data) != self.nbytes:
            raise OSError(f"the tensor gave {len(data)} bytes where {self.nbytes} were expected")
        return data


# A tensor in a dump's file, read when called: a torch file's or a safetensors file's.
Stored = TensorRef | SafeTensor


@functools.lru_cache(maxsize=2)
def _stored(ref: Stored) -> np.ndarray:
    """A whole tensor in its stored dtype (bf16 as its bits), kept while its rows are read one by one."""
    return np.frombuffer(ref(), dtype=DTYPE_NUMPY[ref.dtype]).reshape(ref.shape)


def tensor_record(checkpoint: str, ref: TensorRef, location: Location, **keys: Any) -> TraceRecord:
    """A record over a whole tensor of a torch file, read when compared or packed."""
    keys.setdefault("layer", layer_of(checkpoint))
    return TraceRecord(
        checkpoint=checkpoint,
        dtype=ref.dtype,
        shape=ref.shape,
        numel=ref.numel,
        location=location,
        loader=ArrayLoader(lambda: _stored(ref), ref.nbytes),
        **keys,
    )


def token_records(
    record: TraceRecord,
    ref: Stored,
    positions: list[int],
    axis: int,
    token_ids: list[int] | None = None,
) -> Iterator[TraceRecord]:
    """The record as one record per token along `axis` (after a batch axis of 1 when axis is 1), as
    orchlog's own adapters log them; the record itself when the tensor does not have that many rows there."""
    shape = ref.shape
    batched = axis == 1
    if len(shape) <= axis or shape[axis] != len(positions) or (batched and shape[0] != 1):
        yield record
        return
    row_shape = shape[axis + 1 :] if batched else shape[:axis] + shape[axis + 1 :]
    numel = math.prod(row_shape)
    nbytes = numel * DTYPE_SIZES[ref.dtype]
    for k, position in enumerate(positions):

        def row(k: int = k) -> np.ndarray:
            whole = _stored(ref)
            out: np.ndarray = whole[0, k] if batched else np.take(whole, k, axis=axis)
            return out

        yield dataclasses.replace(
            record,
            shape=row_shape,
            numel=numel,
            loader=ArrayLoader(row, nbytes),
            token_idx=position,
            token_id=None if token_ids is None else token_ids[k],
        )
