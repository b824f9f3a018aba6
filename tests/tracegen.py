"""Build traces for tests: small ones with the reference encoder, large ones (emit) with the C++ emitter."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from orchlog import schema_gen
from orchlog.encoding.record import HeaderInput, RecordInput, encode_header, encode_record, header_values, record_values
from orchlog.read.records import TraceRecord


def name_of(rec: RecordInput) -> str:
    """A record's checkpoint as text (RecordInput takes bytes too, for names that are not UTF-8)."""
    assert isinstance(rec.checkpoint, str), rec.checkpoint
    return rec.checkpoint


def tensor_of(rec: TraceRecord) -> np.ndarray:
    """A read record's tensor, which the test expects it to have."""
    tensor = rec.tensor()
    assert tensor is not None, f"{rec.checkpoint!r} has no tensor"
    return tensor


def raw_of(rec: TraceRecord) -> bytes | memoryview:
    """A read record's tensor bytes, which the test expects it to have."""
    raw = rec.raw_bytes()
    assert raw is not None, f"{rec.checkpoint!r} has no tensor bytes"
    return raw


def header(language: str = "python", **kw) -> HeaderInput:
    return HeaderInput(language=language, created="2026-01-01T00:00:00Z", **kw)


def record(checkpoint: str, array: np.ndarray, **kw) -> RecordInput:
    arr = np.ascontiguousarray(array)
    dtype = {
        "float32": "f32",
        "float16": "f16",
        "float64": "f64",
        "int8": "i8",
        "uint8": "u8",
        "int32": "i32",
        "int64": "i64",
    }[arr.dtype.name]
    return RecordInput(
        checkpoint=checkpoint,
        dtype=dtype,
        shape=arr.shape,
        data=arr.astype(arr.dtype.newbyteorder("<")).tobytes(),
        **kw,
    )


def write_jsonl(path: Path, records: Iterable[RecordInput], head: HeaderInput | None = None) -> Path:
    with open(path, "wb") as f:
        f.write(encode_header(head or header())[0])
        for r in records:
            f.write(encode_record(r).jsonl)
    return path


def emit(path: Path, records: Iterable[RecordInput], mode: str = "summary") -> Path:
    """The same records written by the C++ emitter (orchlog.log), for tests that need many or large ones:
    about 10 us a small record against the reference encoder's 3 ms. Mode "summary" writes JSONL, "full"
    a binary stream with the tensors. token_idx, layer, stage and step carry, and the first record's team
    and leading-values count hold for all; the run header and `seq` (counted by the emitter) are the
    emitter's own."""
    import orchlog
    from orchlog.encoding.dtypes import storage_dtype

    items = iter(records)
    first = next(items, None)
    team, values = (first.team, first.values) if first else ("", 10)
    orchlog.configure(path=str(path), mode=mode, team=team, values="all" if values < 0 else values)
    try:
        for r in itertools.chain([first] if first else [], items):
            array = np.frombuffer(r.data, dtype=storage_dtype(r.dtype)).reshape(r.shape)
            orchlog.log(r.checkpoint, array, token_idx=r.token_idx, layer=r.layer, stage=r.stage, step=r.step)
    finally:
        orchlog.close()
    return path


def write_frames(path: Path, records: Iterable[RecordInput], head: HeaderInput | None = None) -> Path:
    with open(path, "wb") as f:
        f.write(encode_header(head or header())[1])
        for r in records:
            f.write(encode_record(r).frame)
    return path


def write_parquet(path: Path, records: Iterable[RecordInput], head: HeaderInput | None = None, **options) -> Path:
    """A Parquet trace through orchlog.parquet.Writer, each record's fields (seq included) as given."""
    from orchlog.parquet import Writer

    with Writer(path, headers=[header_values(head or header())], **options) as w:
        for r in records:
            w.append(record_values(r))
    return path


def write_json_lines(path: Path, docs: Iterable[dict], gz: bool = False) -> Path:
    """One JSON object per line (legacy formats), optionally gzipped."""
    import gzip
    import json

    text = "".join(json.dumps(d) + "\n" for d in docs).encode()
    path.write_bytes(gzip.compress(text) if gz else text)
    return path


RANDOM_DTYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "f64": np.float64,
    "i8": np.int8,
    "u8": np.uint8,
    "i32": np.int32,
}

# The key parts given by name, each with values a record may hold (None: not given, where the field may be null).
_NAMED = {
    f.name: [None] * f.nullable
    + ([f.min or 0, 1, 7, 2**31 - 1] if f.type in ("i32", "i64") else [True, False] if f.type == "bool" else ["x"])
    for f in schema_gen.RECORD_FIELDS
    if f.source == "key" and not f.positional
}


def random_records(rng: np.random.Generator, records: int, large: bool = False) -> list[RecordInput]:
    """Records of every dtype, NaN and Inf among them, with and without meta, key parts and shard fields (team
    "t"); with `large`, a fifth hold 2**18 + 3 elements (more than a binary reader keeps in its window)."""
    out = []
    for i in range(records):
        dtype = str(rng.choice(list(RANDOM_DTYPES)))
        n = int(rng.choice([0, 1, 3, 17, 300])) if not (large and rng.random() < 0.2) else (1 << 18) + 3
        arr = (rng.standard_normal(n) * 10).astype(RANDOM_DTYPES[dtype])
        if dtype.startswith("f") and n and rng.random() < 0.2:
            arr[rng.integers(0, n)] = rng.choice([np.nan, np.inf, -np.inf])
        meta: dict[str, bool | int | float | str] = (
            {"seed": int(rng.integers(0, 9)), "kv": "yes", "x": 0.5} if rng.random() < 0.3 else {}
        )
        named: dict[str, Any] = {name: choices[int(rng.integers(0, len(choices)))] for name, choices in _NAMED.items()}
        out.append(
            RecordInput(
                checkpoint=str(rng.choice(["attn_norm", "Qcur", "l_out", "café"])),
                dtype=dtype,
                shape=(n,) if rng.random() < 0.7 else (1, n),
                data=arr.tobytes(),
                token_idx=None if rng.random() < 0.2 else int(rng.integers(0, 50)),
                layer=None if rng.random() < 0.3 else int(rng.integers(0, 30)),
                stage=None if rng.random() < 0.5 else "add",
                step=int(rng.integers(0, 3)),
                seq=i,
                meta=meta,
                values=int(rng.choice([0, 4, 10, 1000])),
                team="t",
                **named,
            )
        )
    return out
