"""The JSONL reader gives the same records through the native parser and through plain Python."""

from __future__ import annotations

import json

import numpy as np
import pytest

from orchlog import kernels
from orchlog.encoding import floats
from orchlog.read.formats import orchlog_jsonl
from orchlog.read.formats.lines import CHUNK_BYTES
from orchlog.read.paths import open_trace
from tests.conftest import VECTORS
from tests.tracegen import record, write_jsonl


def _records_of(path, monkeypatch=None, native=True):
    if not native:
        monkeypatch.setattr(kernels, "_native", None)
    trace = open_trace(path)
    return list(trace), trace


def _comparable(rec):
    d = vars(rec).copy()
    d.pop("loader")
    values = d.pop("values")
    d["sketch"] = None if d["sketch"] is None else np.asarray(d["sketch"], dtype=np.float64).tobytes()  # by its bits
    return d, values


def test_every_vector_line_reads_the_same_with_and_without_the_native_parser(tmp_path, monkeypatch):
    cases = json.loads((VECTORS / "records.json").read_text(encoding="utf-8"))["cases"]
    path = tmp_path / "v.jsonl"
    path.write_bytes(b"".join(c["expected"]["jsonl"].encode() + b"\n" for c in cases))
    fast, _ = _records_of(path)
    slow, _ = _records_of(path, monkeypatch, native=False)
    assert len(fast) == len(slow) == len(cases)
    for f, s in zip(fast, slow):
        (df, vf), (ds, vs) = _comparable(f), _comparable(s)
        assert df == ds
        assert np.array_equal(vf, vs, equal_nan=True) and np.array_equal(np.signbit(vf), np.signbit(vs))


def test_f32_values_read_back_as_the_exact_floats_written(tmp_path):
    arr = np.array([0.1, 1 / 3, 3.4028235e38, 1e-45], dtype=np.float32)
    (rec,) = open_trace(write_jsonl(tmp_path / "t.jsonl", [record("x", arr)]))
    assert rec.values is not None
    assert rec.values.tolist() == arr.astype(np.float64).tolist()


def test_lines_laid_out_differently_are_still_records_and_keep_file_order(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [record(f"c{i}", np.arange(3, dtype=np.float32), seq=i) for i in range(3)])
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = (json.dumps(json.loads(lines[2]), indent=None) + "\n").encode()  # spaces after , and :
    path.write_bytes(b"".join(lines))
    trace = open_trace(path)
    assert [(r.checkpoint, r.location and r.location.line) for r in trace] == [("c0", 2), ("c1", 3), ("c2", 4)]
    assert not trace.diagnostics


def test_lines_longer_than_a_read_chunk_are_read_whole(tmp_path):
    big = np.arange(CHUNK_BYTES // 8, dtype=np.float32)
    path = write_jsonl(tmp_path / "t.jsonl", [record("big", big, values=-1), record("small", big[:3])])
    recs = list(open_trace(path))
    assert [r.checkpoint for r in recs] == ["big", "small"]
    assert recs[0].values is not None
    assert recs[0].values.size == big.size and recs[0].values[-1] == big[-1]


@pytest.mark.parametrize("rows", [1, 512])
def test_a_few_rows_asked_for_read_a_small_first_chunk_and_the_rest_as_a_whole_read(tmp_path, rows):
    """A peek at a trace's start (the weight-type peek asks for 512 rows) parses about its rows' worth, not a
    4 MiB chunk; read on, the chunks grow back, lines longer than the first chunk included, and the records
    and their line numbers are those of a whole read."""
    short = write_jsonl(tmp_path / "s.jsonl", [record(f"c{i}", np.arange(i + 1, dtype=np.float32)) for i in range(7)])
    long = write_jsonl(tmp_path / "l.jsonl", [record("long", np.arange(100_000, dtype=np.float32), values=-1)])
    header, *lines = short.read_bytes().splitlines(keepends=True)
    path = tmp_path / "t.jsonl"  # 6,000 lines, the one of about 1 MiB in the middle
    path.write_bytes(b"".join([header, *lines * 428, long.read_bytes().splitlines(keepends=True)[1], *lines * 429]))
    whole = [(r.checkpoint, r.location and r.location.line) for r in open_trace(path)]
    trace = open_trace(path)
    batches = trace.batches(rows=rows)
    first = next(batches)
    assert trace.bytes_read <= max(64 << 10, rows * 2048) < path.stat().st_size
    assert len(first) < 3000
    read = [(r.checkpoint, r.location and r.location.line) for b in [first, *batches] for r in b.records()]
    assert read == whole


@pytest.mark.parametrize("native", [True, False])
def test_malformed_lines_are_reported_by_number_in_both_paths(tmp_path, monkeypatch, native):
    path = write_jsonl(tmp_path / "t.jsonl", [record(f"c{i}", np.ones(2, np.float32)) for i in range(3)])
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(3, b'{"checkpoint":"c9","team":"",\n')
    lines.insert(5, b'{"checkpoint":"missing fields"}\n')
    path.write_bytes(b"".join(lines))
    recs, trace = _records_of(path, monkeypatch, native)
    assert [r.checkpoint for r in recs] == ["c0", "c1", "c2"]
    assert [(d.location.line, d.message.split(" (")[0]) for d in trace.diagnostics] == [
        (4, "malformed JSON"),
        (6, "invalid record"),
    ]


def test_batch_columns_hold_the_key_fields_with_minus_one_for_null(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [record("a", np.ones(2, np.float32), token_idx=4, layer=None, seq=0)])
    (batch,) = open_trace(path).batches()
    assert batch.token_idx.tolist() == [4] and batch.layer.tolist() == [-1] and batch.stage.tolist() == [None]
    assert orchlog_jsonl.exact_values(np.array([0.1]), "f32")[0] == float(np.float32(0.1))


def test_lines_missing_or_damaging_random_fields_read_the_same_both_ways(tmp_path, monkeypatch):
    # The native parser takes a canonical line that lacks some of the identity's numbers, booleans or
    # sketch, with the Python reader's defaults; any other damage goes to the Python reader. Random
    # lines of both kinds must read the same either way: the same records, the same problems.
    import random

    rng = random.Random(5)
    cases = json.loads((VECTORS / "records.json").read_text(encoding="utf-8"))["cases"]
    docs = [json.loads(c["expected"]["jsonl"]) for c in cases]
    damage: tuple[object, ...] = (None, "x", -1, 1.5, True, [], {})
    lines = []
    for _ in range(400):
        doc = dict(rng.choice(docs))
        for name in rng.sample(sorted(doc), rng.randrange(0, 4)):
            if rng.random() < 0.6:
                del doc[name]
            else:
                doc[name] = rng.choice(damage)
        lines.append(json.dumps(doc, separators=(",", ":"), ensure_ascii=False))
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast, fast_trace = _records_of(path)
    slow, slow_trace = _records_of(path, monkeypatch, native=False)
    assert [str(d) for d in fast_trace.diagnostics] == [str(d) for d in slow_trace.diagnostics]
    assert len(fast) == len(slow) and len(fast) > 100
    for f, s in zip(fast, slow):
        (df, vf), (ds, vs) = _comparable(f), _comparable(s)
        assert df == ds
        assert np.array_equal(vf, vs, equal_nan=True)


def test_hex_sketch_rows_read_bit_for_bit_and_bad_hex_is_reported_by_either_parser(tmp_path, monkeypatch):
    # Schema 3 writes the rows as their f32 bits in hex: every row, subnormals, -0.0 and infinities
    # included, reads back exactly; text that is not 512 lowercase hex digits is a reported line.
    rows = np.array([1.0, -0.0, 1e-45, -np.inf, np.inf, 3.4028235e38] + [0.5] * 58, dtype=np.float32)
    recs = [record(f"c{i}", np.ones(8, dtype=np.float32), seq=i) for i in range(4)]
    jsonl = write_jsonl(tmp_path / "t.jsonl", recs)
    lines = jsonl.read_text().splitlines()
    good = floats.hex_bits(rows, "f32")
    assert good[:16] == "3f80000080000000"
    for i, text in enumerate([good, good.upper(), good[:-8], good[:-1] + "g"], start=1):
        doc = json.loads(lines[i])
        doc["sketch"] = text
        lines[i] = json.dumps(doc, separators=(",", ":"))
    jsonl.write_text("\n".join(lines) + "\n")
    for native in (True, False):
        got, trace = _records_of(jsonl, monkeypatch, native=native)
        assert [r.checkpoint for r in got] == ["c0"]
        assert np.asarray(got[0].sketch, dtype=np.float32).tobytes() == rows.tobytes()
        assert [d.location.line for d in trace.diagnostics] == [3, 4, 5]
        assert all("sketch is not 64 floats of 8 lowercase hex digits" in d.message for d in trace.diagnostics)


def test_sketch_rows_read_as_the_f32_the_binary_stream_stores_through_either_parser(tmp_path, monkeypatch):
    # The sketch is f32: a reader takes each number's nearest f32 (ties to even; beyond f32's range,
    # infinity), so JSONL and the binary stream give the same bits, whatever digits the text held.
    # Schema 2 wrote the rows as numbers, which readers still take; line 1 is made one of those.
    from tests.tracegen import write_frames

    recs = [record(f"c{i}", np.random.default_rng(i).standard_normal(300).astype(np.float32), seq=i) for i in range(3)]
    jsonl, frames = write_jsonl(tmp_path / "t.jsonl", recs), write_frames(tmp_path / "t.bin", recs)
    from_bin = [np.asarray(r.sketch) for r in open_trace(frames)]
    lines = jsonl.read_text().splitlines()
    doc = json.loads(lines[1])
    doc["sketch"] = floats.from_hex_bits(doc["sketch"], 64, "f32")
    doc["sketch"][:4] = [0.1, 1e39, -1e39, 3.4028235e38]  # the last rounds down to the largest f32
    lines[1] = json.dumps(doc, separators=(",", ":"))
    jsonl.write_text("\n".join(lines) + "\n")
    want = np.array([0.1, np.inf, -np.inf, 3.4028234663852886e38], dtype=np.float32).astype(np.float64)
    for native in (True, False):
        got, _ = _records_of(jsonl, monkeypatch, native=native)
        assert np.array_equal(got[0].sketch[:4], want)
        for rec, exact in zip(got[1:], from_bin[1:]):
            assert np.asarray(rec.sketch).tobytes() == exact.tobytes()
