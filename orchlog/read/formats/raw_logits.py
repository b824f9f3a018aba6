"""Raw binaries of llama.cpp's model-conversion tools: `llama-debug --save-logits` and the PyTorch side's
`save_output_data` write `data/{llamacpp,pytorch}-{model}.bin`, the last token's logits (or embeddings)
as raw little-endian float32, and `...-tokens.bin`, the prompt's token ids as raw int32.

There is no header, so the content is all there is to go by, and this format is asked last: a file
whose size is a multiple of 4 and whose every word (of the first 64 KiB) is a token id (an int32 in
0..2**24, which as float32 is zero or subnormal) is a tokens file; one whose every word is a finite
float32 of magnitude below 1e6 and not subnormal, nine in ten of them between 1e-3 and 1e4, is logits
(text read as float32 is mostly far below 1e-3). Anything else is not claimed. A logits
file is one record, checkpoint `logits` (shape [n]); a tokens file one record, checkpoint
`input_ids` (i32). The `.txt` and `-prompt.txt` beside them say the same in text and are not read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from orchlog.read.formats import register_records
from orchlog.read.formats.tool_common import ArrayLoader, open_file, tool_header
from orchlog.read.trace import Location, Trace, TraceRecord

MAX_TOKEN_ID = 1 << 24
MAX_LOGIT = 1e6
MIN_WORDS = 2
TYPICAL = (1e-3, 1e4)
TYPICAL_SHARE = 0.9


def kind_of(data: bytes) -> str | None:
    """ "logits", "tokens" or None for the first bytes of a file whose whole size is a multiple of 4."""
    n = len(data) // 4
    if n < MIN_WORDS:
        return None
    ints = np.frombuffer(data[: n * 4], dtype="<i4")
    if ((ints >= 0) & (ints < MAX_TOKEN_ID)).all():
        return "tokens"
    floats = np.frombuffer(data[: n * 4], dtype="<f4")
    with np.errstate(invalid="ignore"):
        magnitude = np.abs(floats)
        plausible = (
            np.isfinite(floats)
            & (magnitude < MAX_LOGIT)
            & ((magnitude == 0) | (magnitude >= np.finfo(np.float32).tiny))
        )
        # Logits are mostly of order 1; text read as floats (digits, punctuation) is mostly far below 1e-3.
        typical = (magnitude >= TYPICAL[0]) & (magnitude <= TYPICAL[1])
    return "logits" if plausible.all() and typical.mean() >= TYPICAL_SHARE else None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _sniff(path: Path, head: bytes) -> bool:
    size = _size(path)
    return (
        size > 0
        and size % 4 == 0
        and len(head) == min(size, len(head))
        and not head.startswith(b"\x1f\x8b")
        and kind_of(head) is not None
    )


def _records(trace: Trace) -> Iterator[TraceRecord]:
    path = Path(trace.path)
    size = _size(path)
    with open_file(path) as f:
        head = f.read(64 * 1024)
    kind = kind_of(head)
    where = Location(trace.path)
    if kind is None or size % 4:
        trace.report(where, "no longer a raw logits or tokens file; not read", fatal=True)
        return
    trace.bytes_read = size
    n = size // 4
    dtype, np_dtype = ("i32", "<i4") if kind == "tokens" else ("f32", "<f4")
    trace.headers.append(
        tool_header(
            "llama.cpp model-conversion",
            "the prompt's token ids (raw int32)" if kind == "tokens" else "the last token's logits (raw float32)",
        )
    )

    def load() -> np.ndarray:
        with open_file(path) as f:
            data = f.read(n * 4)
        if len(data) != n * 4:
            raise OSError(f"{path} is shorter than when it was opened")
        return np.frombuffer(data, dtype=np_dtype)

    yield TraceRecord(
        checkpoint="input_ids" if kind == "tokens" else "logits",
        step=0,
        dtype=dtype,
        shape=(n,),
        numel=n,
        location=where,
        loader=ArrayLoader(load, n * 4),
    )


register_records(
    "raw-logits", _sniff, _records, priority=90, companions=("*-prompt.txt", "llamacpp-*.txt", "pytorch-*.txt")
)
