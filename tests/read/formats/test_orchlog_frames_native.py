"""The native frame decoder reads what the Python decoder reads, and reports the same problems, on any bytes."""

from __future__ import annotations

import json
import math

import msgpack
import numpy as np
import pytest

from orchlog import kernels, schema_gen
from orchlog.encoding import floats
from orchlog.encoding.record import encode_header, encode_record
from orchlog.read import readahead
from orchlog.read.formats import orchlog_frames
from orchlog.read.formats.orchlog_frames import open_frames
from tests.conftest import load_vectors
from tests.tracegen import header, random_records

pytestmark = pytest.mark.skipif(not kernels.NATIVE, reason="the native kernels are not built")


def _random_trace(rng: np.random.Generator, records: int, large: bool = False) -> bytes:
    frames = [encode_record(r).frame for r in random_records(rng, records, large)]
    return b"".join([encode_header(header(team="t"))[1], *frames])


def _same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return x == y


def _value(record, column) -> object:
    """A record's field as both decoders must agree on it: floats (the sketch) by their f64 bits, NaN included."""
    value = getattr(record, column.name)
    return np.asarray(value, dtype=np.float64).tobytes() if column.kind == "floats" and value is not None else value


def _read(path, native: bool, monkeypatch) -> tuple[list, list]:
    """Every record of the trace and every problem, read one record at a time, natively or by Python alone."""
    with monkeypatch.context() as m:
        if not native:
            m.setattr(kernels, "NATIVE", False)
        trace = open_frames(path)
        rows = []
        for r in trace:
            raw = r.raw_bytes()
            assert r.values is not None
            rows.append(
                (
                    *(_value(r, c) for c in schema_gen.COLUMNS),  # every identity field the schema has
                    r.dtype, r.shape, r.numel, r.values.tobytes(), r.values.size, r.stats, r.blake3, r.meta,
                    str(r.location), r.order, None if raw is None else bytes(raw),
                    r.frame_check is not None and r.frame_check(),  # what `orchlog validate` says of the frame
                )
            )  # fmt: skip
        problems = [(str(d.location), d.message, d.fatal) for d in trace.diagnostics]
        headers = trace.headers
    return rows, problems + [("headers", repr(headers), False)]


def _assert_read_alike(path, monkeypatch) -> None:
    native_rows, native_problems = _read(path, True, monkeypatch)
    python_rows, python_problems = _read(path, False, monkeypatch)
    assert native_problems == python_problems
    assert len(native_rows) == len(python_rows)
    for a, b in zip(native_rows, python_rows):
        for x, y in zip(a, b):
            if x != y:  # NaN in stats compare unequal to themselves
                assert repr(x) == repr(y)


@pytest.mark.parametrize("seed", range(4))
def test_random_traces_read_alike(tmp_path, seed, monkeypatch):
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(seed), 200, large=seed == 3))
    _assert_read_alike(path, monkeypatch)


@pytest.mark.parametrize("seed", range(200))
def test_mutated_traces_read_alike_and_never_crash(tmp_path, seed, monkeypatch):
    """Flipped bytes, cut tails, spliced and repeated pieces: both decoders keep and report the same."""
    rng = np.random.default_rng(1000 + seed)
    data = _damaged(rng, _random_trace(rng, 30), int(rng.integers(1, 6)))
    if seed % 2:  # frames straddle windows, and some are longer than one
        monkeypatch.setattr(orchlog_frames, "WINDOW", 2048)
        monkeypatch.setattr(orchlog_frames, "_AFTER_SKIP", 256)
    if seed % 4 >= 2:  # every read mapped from the file, at offsets of any alignment
        monkeypatch.setattr(orchlog_frames, "_MAP_READS_FROM", 1)
    path = tmp_path / "t.bin"
    path.write_bytes(data)
    _assert_read_alike(path, monkeypatch)


@pytest.mark.parametrize("seed", range(6))
def test_frames_whose_keys_change_order_and_number_read_alike(tmp_path, seed, monkeypatch):
    """The decoder takes a key that is the same bytes as the last frame's key at its place for that key:
    frames whose keys come in another order (two keys of one length and type trading places among them,
    with values that tell them apart), with one key more (one no schema has) or one fewer (the checksum)
    than the frame before, read and report as the Python decoder reads and reports them."""
    rng = np.random.default_rng(5000 + seed)
    out = [encode_header(header(team="t"))[1]]
    for k, rec in enumerate(random_records(rng, 120, large=seed == 5)):
        fields = msgpack.unpackb(encode_record(rec).frame, raw=False)
        fields.update(step=7, rank=3, layer=5)
        items = list(fields.items())
        change = 0 if k % 2 == 0 else 4 if k % 4 == 1 else int(rng.integers(1, 4))  # every other frame as written
        if change == 4:  # the same keys as the frame before, but two pairs of them traded
            place = {key: i for i, (key, _) in enumerate(items)}
            for x, y in (("step", "rank"), ("layer", "numel")):
                items[place[x]], items[place[y]] = items[place[y]], items[place[x]]
        elif change == 1:
            items = [items[i] for i in rng.permutation(len(items))]
        elif change == 2:
            items.insert(int(rng.integers(0, len(items) + 1)), ("unheard_of", int(rng.integers(0, 100))))
        elif change == 3:
            items = [kv for kv in items if kv[0] != "crc32c"]
        out.append(msgpack.packb(dict(items), use_bin_type=True))
    path = tmp_path / "t.bin"
    path.write_bytes(b"".join(out))
    _assert_read_alike(path, monkeypatch)


def _damaged(rng: np.random.Generator, trace: bytes, times: int) -> bytes:
    """The trace with `times` damages: a flipped byte, a hostile count, a piece spliced in, a cut tail."""
    data = bytearray(trace)
    for _ in range(times):
        kind = rng.integers(0, 4)
        at = int(rng.integers(0, len(data)))
        if kind == 0:
            data[at] = int(rng.integers(0, 256))
        elif kind == 1:
            data[at : at + 4] = bytes([0xDD, 0xFF, 0xFF, 0xFF])  # a hostile count
        elif kind == 2:
            piece = data[at : at + int(rng.integers(1, 400))]
            data[int(rng.integers(0, len(data))) : 0] = piece
        else:
            del data[at:]
    return bytes(data)


def test_a_frame_longer_than_the_window_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(orchlog_frames, "WINDOW", 4096)
    monkeypatch.setattr(orchlog_frames, "_AFTER_SKIP", 512)
    path = tmp_path / "t.bin"
    path.write_bytes(_random_trace(np.random.default_rng(9), 60))
    _assert_read_alike(path, monkeypatch)


def _vector_frames() -> tuple[list[dict], bytes]:
    cases = load_vectors("records.json")["cases"]
    return cases, b"".join(bytes.fromhex(c["expected"]["frame_hex"]) for c in cases)


def _column_value(cols: dict, c: schema_gen.ColumnSpec, row: int):
    """A decoded column's value at a row, as the record's JSON has it (null for -1 or NaN)."""
    if c.kind == "text":
        i = int(cols[c.name][row])
        return None if i < 0 else cols[f"{c.name}_names"][i]
    if c.kind == "floats":  # as the f32 values the JSON's shortest digits stand for (the sketch's precision)
        return cols[c.name].reshape(-1, c.length)[row].astype(np.float32).tolist()
    v = int(cols[c.name][row])
    return None if v < 0 else bool(v) if c.kind == "bool" else v


def test_the_native_decoder_takes_every_vector_frame_itself_and_fills_every_schema_column():
    """Every field of the schema is read natively: a field the generated layout missed would be left null
    (or at its default) where a vector sets it, and f32_all_fields sets every one; a frame the decoder
    could not take would stop it (and go to Python) before the last case."""
    cases, frames = _vector_frames()
    cols = kernels.decode_frames(np.frombuffer(frames, dtype=np.uint8), 0, readahead.MAP_FROM)
    assert (cols["stop"], cols["n"]) == (kernels.FRAMES_END, len(cases))
    for row, case in enumerate(cases):
        line = json.loads(case["expected"]["jsonl"])
        for c in schema_gen.COLUMNS:
            expected = line[c.name]
            if c.kind == "floats":  # JSONL's hex bits (FORMAT.md, "Numbers"), as floats
                expected = floats.from_hex_bits(expected, c.length, c.precision)
            assert _column_value(cols, c, row) == expected, (case["name"], c.name)
    full = json.loads(next(c["expected"]["jsonl"] for c in cases if c["name"] == "f32_all_fields"))
    assert [c.name for c in schema_gen.COLUMNS if full[c.name] is None] == []  # a missed field would show


def test_a_trace_of_every_vector_reads_alike_natively_and_in_python(tmp_path, monkeypatch):
    _, frames = _vector_frames()
    path = tmp_path / "vectors.bin"
    path.write_bytes(encode_header(header(team="t"))[1] + frames)
    _assert_read_alike(path, monkeypatch)
