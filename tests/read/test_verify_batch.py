"""`orchlog validate --verify-hashes` over whole batches (orchlog/read/verify_batch.py) says what the record-by-record
check says, on frames whose checksum holds while a field disagrees with the tensor (a faulty emitter's, which the
damaged copies of test_validate_batch never are: their checksums fail first), and makes no record of a sound row."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from orchlog import open_trace
from orchlog.encoding.record import encode_header, record_frame, record_line, record_values
from orchlog.read import validate as validating
from orchlog.read.batch import JoinedChecks, RecordBatch
from orchlog.schema_gen import RecordInput
from tests.read.validate_ways import both_ways
from tests.tracegen import header, record, write_jsonl


def _tensors(rng: np.random.Generator, rebuilt_from_text: bool = False) -> list[RecordInput]:
    """One record of every dtype, some with NaN and inf, an empty one and a scalar. `rebuilt_from_text`: none
    whose every value, as text, fails to give back its bytes (NaN, i64 past 2**53)."""
    f32 = rng.standard_normal(300).astype(np.float32)
    f32[[3, 40]] = 1.5 if rebuilt_from_text else np.nan, np.inf
    bf16 = (rng.standard_normal(64).astype(np.float32).view(np.uint32) >> 16).astype("<u2")
    return [
        record("f32", f32.reshape(20, 15)),
        record("f16", rng.standard_normal(33).astype(np.float16)),
        record("f64", rng.standard_normal(17)),
        RecordInput(checkpoint="bf16", dtype="bf16", shape=(64,), data=bf16.tobytes()),
        record("i8", rng.integers(-128, 127, 50).astype(np.int8)),
        record("u8", rng.integers(0, 255, 9).astype(np.uint8)),
        record("i32", rng.integers(-(2**31), 2**31 - 1, 21).astype(np.int32)),
        record("i64", np.array([2**40 if rebuilt_from_text else 2**62, -5, 7], dtype=np.int64)),
        record("empty", np.zeros((0, 4), dtype=np.float32)),
        record("scalar", np.array(2.5, dtype=np.float32), values=-1),
        *([] if rebuilt_from_text else [record("all_nan", np.full(5, np.nan, dtype=np.float32))]),
    ]


def _nudged(values: list, k: int, by: float) -> list:
    out = list(values)
    out[k] = float(np.float32(out[k] + by))
    return out


def _lead(fields: dict, value: float) -> None:
    """The first leading value set to `value`."""
    if len(fields["values"]):
        fields["values"] = np.concatenate([[value], fields["values"][1:]])


# Each way a frame's fields can disagree with its tensor while its checksum holds.
_EDITS = {
    "blake3": lambda f: f.update(blake3=("0" if f["blake3"][0] != "0" else "1") + f["blake3"][1:]),
    "min": lambda f: f.update(stats=dataclasses.replace(f["stats"], min=-1e9)),
    "mean": lambda f: f.update(stats=dataclasses.replace(f["stats"], mean=np.nextafter(f["stats"].mean or 0.0, 9.0))),
    "nan_count": lambda f: f.update(stats=dataclasses.replace(f["stats"], nan_count=f["stats"].nan_count + 1)),
    "rms": lambda f: f.update(stats=dataclasses.replace(f["stats"], rms=None)),
    "sketch": lambda f: f.update(sketch=_nudged(f["sketch"], 7, 0.5)),
    "value": lambda f: _lead(f, 123.0),
    "value_nan": lambda f: _lead(f, np.nan) if f["dtype"] in ("f16", "bf16", "f32", "f64") else None,
    "numel": lambda f: f.update(numel=f["numel"] + 1),
    "shape": lambda f: f.update(shape=[*f["shape"], 2]),
    "dtype": lambda f: f.update(dtype="i32" if f["dtype"] == "f32" else "f32", values=np.zeros(0)),
}


def _write(path, frames: list[bytes]) -> None:
    path.write_bytes(encode_header(header())[1] + b"".join(frames))


# The traces whose records carry their whole tensor: the binary stream's data, or JSONL's every value.
_FORMS = {
    "frames": ("t.bin", 10, record_frame, encode_header(header())[1]),
    "jsonl_every_value": ("t.jsonl", -1, record_line, encode_header(header(values=-1))[0]),
}


@pytest.mark.parametrize("form", sorted(_FORMS))
@pytest.mark.parametrize("edit", sorted(_EDITS))
def test_a_field_that_disagrees_with_its_tensor_is_reported_as_record_by_record(tmp_path, monkeypatch, edit, form):
    name, values, encode, head = _FORMS[form]
    rng = np.random.default_rng(sorted(_EDITS).index(edit))
    written, edited = [], 0
    for seq, r in enumerate(_tensors(rng) * 3):
        fields = record_values(dataclasses.replace(r, seq=seq, values=values))
        sound = encode(fields)
        if seq % 3 == 1:  # every dtype edited once, with sound records of it on either side
            _EDITS[edit](fields)
        written.append(encode(fields))
        edited += written[-1] != sound
    path = tmp_path / name
    path.write_bytes(head + b"".join(written))
    fast, slow = both_ways(path, monkeypatch, verify_hashes=True)
    assert str(fast) == str(slow)
    assert fast.to_json() == slow.to_json()
    assert edited and len({p.location for p in fast.problems}) >= edited // 2, str(fast)
    assert fast.hashes_checked >= len(written) // 3  # the sound records at least


def test_a_damaged_checksum_is_reported_as_record_by_record(tmp_path, monkeypatch):
    frames = [
        record_frame(record_values(dataclasses.replace(r, seq=i)))
        for i, r in enumerate(_tensors(np.random.default_rng(1)))
    ]
    frames[2] = frames[2][:-1] + bytes([frames[2][-1] ^ 1])  # the checksum's last byte
    frames[5] = frames[5][:-2] + b"\x00\x00"
    path = tmp_path / "t.bin"
    _write(path, frames)
    fast, slow = both_ways(path, monkeypatch, verify_hashes=True)
    assert str(fast) == str(slow)
    assert [p.message.split(" is ")[0] for p in fast.problems] == ["frame checksum (CRC-32C)"] * 2


@pytest.mark.parametrize("form", sorted(_FORMS))
def test_no_record_is_made_for_a_sound_row(tmp_path, monkeypatch, form):
    name, values, encode, head = _FORMS[form]
    tensors = _tensors(np.random.default_rng(2), rebuilt_from_text=True) * 20
    path = tmp_path / name
    path.write_bytes(
        head
        + b"".join(encode(record_values(dataclasses.replace(r, seq=i, values=values))) for i, r in enumerate(tensors))
    )

    def made(self, i, own=False):
        raise AssertionError(f"row {i} made a record")

    monkeypatch.setattr(RecordBatch, "record", made)
    report = validating.validate(open_trace(path), verify_hashes=True)
    assert report and report.records == report.hashes_checked == len(tensors)


def test_a_directorys_binary_files_have_their_checksums_checked_in_joined_batches(tmp_path, monkeypatch):
    """A file of more than one read window gives a batch joined from each window's: the checks are joined too."""
    run = tmp_path / "run"
    run.mkdir()
    damaged = []
    for name in ("a", "b"):
        frames = [
            record_frame(record_values(dataclasses.replace(r, seq=i)))
            for i, r in enumerate(_tensors(np.random.default_rng(3)) * 20)
        ]
        for k in (4, 150):
            frames[k] = frames[k][:-1] + bytes([frames[k][-1] ^ 0x80])
        _write(run / f"{name}.bin", frames)
        offsets = [str(rec.location) for rec in open_trace(run / f"{name}.bin")]
        damaged += [offsets[k] for k in (4, 150)]
    write_jsonl(run / "c.jsonl", [record("x", np.arange(4, dtype=np.float32))])
    runs = [r for r in open_trace(run).runs() if isinstance(r, RecordBatch)]
    assert any(isinstance(r.frame_checks, JoinedChecks) for r in runs)
    fast, slow = both_ways(run, monkeypatch, verify_hashes=True)
    assert str(fast) == str(slow)
    assert [p.location for p in fast.problems if "frame checksum (CRC-32C)" in p.message] == damaged


def test_a_batch_whose_every_row_cannot_be_rebuilt_from_its_values_is_checked_record_by_record(tmp_path, monkeypatch):
    nan = record_values(record("nan", np.array([np.nan, 1.0], dtype=np.float32), values=-1))
    path = tmp_path / "t.jsonl"
    path.write_bytes(encode_header(header(values=-1))[0] + record_line(nan))
    fast, slow = both_ways(path, monkeypatch, verify_hashes=True)
    assert str(fast) == str(slow) and fast and fast.hashes_checked == 0
