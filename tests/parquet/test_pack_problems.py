"""pack reports hash mismatches and truncated inputs with their positions; --strict makes them fatal."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.encoding.record import encode_record
from orchlog.errors import OrchlogError
from orchlog.parquet import pack, read, schema
from orchlog.read.trace import Diagnostic
from tests.tracegen import raw_of, record, write_frames


def _records(n=4):
    return [record(f"c{i}", np.full(64, i, np.float32), seq=i) for i in range(n)]


def _corrupt_tensor(path, index: int, records) -> int:
    """Flip a byte inside record `index`'s tensor; returns the frame's offset."""
    raw = bytearray(path.read_bytes())
    frames = [encode_record(r).frame for r in records]
    start = len(raw) - sum(len(f) for f in frames) + sum(len(f) for f in frames[:index])
    raw[start + len(frames[index]) - 13] ^= 0xFF  # the tensor's last byte, before the frame checksum (12 bytes)
    path.write_bytes(bytes(raw))
    return start


def test_a_hash_mismatch_is_reported_at_its_frame_and_the_row_kept_as_found(tmp_path):
    recs = _records()
    stream = write_frames(tmp_path / "t.bin", recs)
    offset = _corrupt_tensor(stream, 2, recs)
    seen: list[Diagnostic] = []
    result = pack([stream], tmp_path / "out.parquet", on_problem=seen.append)
    assert not result and result.records == 4
    (problem,) = result.problems
    assert seen == [problem] and problem.location.offset == offset
    assert f"{stream}@{offset}: blake3 mismatch" in str(problem)
    packed = list(read(tmp_path / "out.parquet"))
    assert packed[2].blake3 == encode_record(recs[2]).blake3, "the stored hash is kept, so validate finds it too"
    assert bytes(raw_of(packed[2])) != np.full(64, 2, np.float32).tobytes()


def test_a_truncated_input_is_reported_and_every_whole_frame_packed(tmp_path):
    recs = _records()
    stream = write_frames(tmp_path / "t.bin", recs)
    stream.write_bytes(stream.read_bytes()[:-7])
    result = pack([stream], tmp_path / "out.parquet")
    assert result.records == 3
    (problem,) = result.problems
    assert "truncated frame" in problem.message and problem.location.offset is not None
    assert [r.checkpoint for r in read(tmp_path / "out.parquet")] == ["c0", "c1", "c2"]


def test_garbage_in_the_middle_is_reported_and_the_frames_after_it_packed(tmp_path):
    recs = _records(2)
    stream = write_frames(tmp_path / "t.bin", [])
    frames = [encode_record(r).frame for r in recs]
    stream.write_bytes(stream.read_bytes() + frames[0] + b"\xc1junk" + frames[1])
    result = pack([stream], tmp_path / "out.parquet")
    assert result.records == 2 and "unreadable bytes" in result.problems[0].message


@pytest.mark.parametrize("damage", ["truncate", "corrupt"])
def test_strict_stops_at_the_first_problem_and_writes_nothing(tmp_path, damage):
    recs = _records()
    stream = write_frames(tmp_path / "t.bin", recs)
    if damage == "truncate":
        stream.write_bytes(stream.read_bytes()[:-7])
    else:
        _corrupt_tensor(stream, 1, recs)
    with pytest.raises(OrchlogError, match=r"t\.bin@\d+: .*--strict: stopped, nothing written"):
        pack([stream], tmp_path / "out.parquet", strict=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.bin"]


def test_a_previous_output_survives_a_failed_strict_pack(tmp_path):
    recs = _records()
    good = write_frames(tmp_path / "good.bin", recs)
    pack([good], tmp_path / "out.parquet")
    before = (tmp_path / "out.parquet").read_bytes()
    bad = write_frames(tmp_path / "bad.bin", recs)
    bad.write_bytes(bad.read_bytes()[:-7])
    with pytest.raises(OrchlogError):
        pack([bad], tmp_path / "out.parquet", strict=True)
    assert (tmp_path / "out.parquet").read_bytes() == before


def test_a_tensor_too_large_for_a_parquet_value_is_reported_and_its_row_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(schema, "MAX_TENSOR_BYTES", 200)  # real limit: 2 GiB, too big for a test
    stream = write_frames(
        tmp_path / "t.bin", [record("small", np.ones(8, np.float32)), record("big", np.ones(64, np.float32))]
    )
    result = pack([stream], tmp_path / "out.parquet")
    assert result.records == 2 and result.tensors == 1
    assert "more than one Parquet value can hold" in result.problems[0].message
    small, big = list(read(tmp_path / "out.parquet"))
    assert big.stats is not None
    assert small.has_data and not big.has_data and big.stats.max == 1.0
