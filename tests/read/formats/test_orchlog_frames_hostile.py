"""The binary stream reader against hostile bytes: lengths it cannot trust, nesting, cut gzip streams, checksums."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap

import numpy as np

from orchlog.encoding.record import encode_header, encode_record
from orchlog.kernels import crc32c
from orchlog.read.paths import open_trace
from orchlog.read.validate import validate
from tests.conftest import ROOT
from tests.tracegen import header, record


def _frames(n: int = 3) -> list[bytes]:
    return [encode_record(record(f"c{i}", np.full(8, i, np.float32), seq=i)).frame for i in range(n)]


def _with_checksum(frame: bytes, damage: bool = False) -> bytes:
    """A record frame with the recommended checksum appended: CRC-32C of the frame's bytes before its key."""
    assert frame[0] == 0xDE  # a record map has more than 15 keys
    count = int.from_bytes(frame[1:3], "big")
    covered = b"\xde" + (count + 1).to_bytes(2, "big") + frame[3:]
    crc = crc32c(covered) ^ (1 if damage else 0)
    return covered + b"\xa6crc32c\xce" + crc.to_bytes(4, "big")


def test_a_gzipped_stream_cut_short_keeps_every_complete_frame(tmp_path):
    body = encode_header(header())[1] + b"".join(_frames(40))
    packed = gzip.compress(body, mtime=0)
    path = tmp_path / "run.bin.gz"
    path.write_bytes(packed[: len(packed) * 3 // 4])
    trace = open_trace(path)
    seqs = [r.seq for r in trace]
    assert 10 < len(seqs) < 40 and seqs == list(range(len(seqs)))
    [cut] = trace.diagnostics
    assert cut.fatal and ("cut short" in cut.message or "truncated" in cut.message)


def test_lengths_past_the_end_of_the_file_cost_nothing_and_are_reported(tmp_path):
    # A str32 claiming 4 GiB, then a bin32 claiming 2 GiB, in a file of a few hundred bytes; read under
    # an address-space cap of 1.5 GiB, which an allocation sized from either claim would break.
    for claim in (b"\xdb\xff\xff\xff\xff", b"\xc6\x7f\xff\xff\xff"):
        frame = _frames(1)[0]
        at = frame.index(b"\xa4team") + 5
        path = tmp_path / f"claim{claim[0]:x}.bin"
        path.write_bytes(encode_header(header())[1] + frame[:at] + claim + frame[at:] + _frames(2)[1])
        code = f"""
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
            from orchlog.read.paths import open_trace
            trace = open_trace({str(path)!r})
            print(len(list(trace)), [d.message for d in trace.diagnostics])
        """
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        assert "unreadable bytes" in done.stdout or "truncated" in done.stdout


def test_nesting_deeper_than_any_frame_holds_is_skipped_and_the_next_frame_read(tmp_path):
    frame = _frames(1)[0]
    at = frame.index(b"\xa4meta") + 5
    deep = b"\x91" * 100_000 + b"\xc0"
    path = tmp_path / "deep.bin"
    path.write_bytes(encode_header(header())[1] + frame[:at] + deep + frame[at + 1 :] + _frames(2)[1])
    trace = open_trace(path)
    assert [r.seq for r in trace] == [1]
    assert any("nested deeper" in d.message for d in trace.diagnostics)


def test_a_frame_checksum_is_checked_when_present_and_names_a_damaged_frame(tmp_path):
    good, bad = _frames(2)
    path = tmp_path / "sums.bin"
    path.write_bytes(encode_header(header())[1] + _with_checksum(good) + _with_checksum(bad, damage=True))
    report = validate(open_trace(path), verify_hashes=True)
    [problem] = report.problems
    assert problem.location.endswith(
        f"@{len(encode_header(header())[1]) + len(good) + 12}"
    )  # the first frame grew by its key and value
    assert "frame checksum (CRC-32C)" in problem.message and "damaged" in problem.message
    assert [r.seq for r in open_trace(path)] == [0, 1]  # the reader itself does not need the sum


def test_crc32c_matches_the_standard_check_value_natively_and_in_python():
    assert crc32c(b"123456789") == crc32c(b"123456789", native=False) == 0xE3069283
    data = np.random.default_rng(0).bytes(10_001)
    assert crc32c(data[5000:], crc32c(data[:5000])) == crc32c(data) == crc32c(data, native=False)
