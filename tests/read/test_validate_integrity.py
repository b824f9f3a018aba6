"""What `validate --verify-hashes` proves about a trace with whole tensors, and what damage it names."""

from __future__ import annotations

import numpy as np
import pytest

from orchlog.encoding.record import encode_header, encode_record
from orchlog.read.paths import open_trace
from orchlog.read.validate import validate
from tests.tracegen import header, record, write_frames, write_jsonl


def _records(n: int = 4):
    rng = np.random.default_rng(1)
    return [record(f"c{i}", rng.standard_normal(16).astype(np.float32), token_idx=i, seq=i) for i in range(n)]


@pytest.mark.parametrize("stat", ["min", "max", "mean", "rms", "abs_max"])
def test_a_stat_that_disagrees_with_the_tensor_is_named(stat, tmp_path):
    recs = _records()
    frames = [encode_record(r).frame for r in recs]
    # Change one stat of record 2 in place: its f64 bytes follow the key.
    key = b"\xa3" + stat.encode() if len(stat) == 3 else bytes([0xA0 | len(stat)]) + stat.encode()
    at = frames[2].index(key + b"\xcb") + len(key) + 1
    frames[2] = frames[2][:at] + bytes([frames[2][at] ^ 0x01]) + frames[2][at + 1 :]
    path = tmp_path / "run.bin"
    path.write_bytes(encode_header(header())[1] + b"".join(frames))
    problems = [p.message for p in validate(open_trace(path), verify_hashes=True).problems]
    assert any(f"stats differ from the data: {stat}" in p for p in problems), problems


def test_every_value_of_a_summary_with_all_values_is_checked_against_its_hash_and_stats(tmp_path):
    path = write_jsonl(tmp_path / "all.jsonl", [record("a", np.arange(6, dtype=np.float32), seq=0, values=-1)])
    report = validate(open_trace(path), verify_hashes=True)
    assert report and report.hashes_checked == 1


def test_a_second_run_header_in_one_file_makes_it_invalid(tmp_path):
    path = tmp_path / "two.jsonl"
    write_jsonl(path, _records(3))
    with open(path, "ab") as f:  # what two writers without a lock would leave
        f.write(encode_header(header())[0] + encode_record(_records(1)[0]).jsonl)
    problems = [p.message for p in validate(open_trace(path)).problems]
    assert any("another run header" in p for p in problems)
    assert any("seq 0 follows 2" in p for p in problems)


def test_frames_overwritten_by_another_writer_are_never_called_valid(tmp_path):
    path = write_frames(tmp_path / "run.bin", _records(6))
    data = bytearray(path.read_bytes())
    other = encode_header(header())[1] + encode_record(_records(1)[0]).frame
    data[300 : 300 + len(other)] = other  # a second process writing from its own offset 0 would do this
    path.write_bytes(bytes(data))
    assert not validate(open_trace(path), verify_hashes=True)


def test_stats_of_tensors_whose_sums_round_are_still_valid(tmp_path):
    rng = np.random.default_rng(7)
    recs = [
        record(f"c{i}", np.full(n, value, np.float32), seq=i)
        for i, (n, value) in enumerate((n, v) for n in (3, 10, 999, 4097) for v in (0.1, -0.3, 1e-30, 3.4e38))
    ]
    recs += [record("r", rng.standard_normal(5000).astype(np.float32) * 1e6, seq=len(recs))]
    path = write_frames(tmp_path / "round.bin", recs)
    assert validate(open_trace(path), verify_hashes=True).problems == []
