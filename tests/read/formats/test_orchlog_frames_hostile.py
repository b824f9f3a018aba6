"""The binary stream reader against hostile bytes: lengths it cannot trust, nesting, cut gzip streams, checksums."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from orchlog.encoding.record import encode_header, encode_record
from orchlog.kernels import crc32c
from orchlog.read.paths import open_trace
from orchlog.read.validate import validate
from tests.conftest import ROOT
from tests.tracegen import header, record


def _frames(n: int = 3) -> list[bytes]:
    return [encode_record(record(f"c{i}", np.full(8, i, np.float32), seq=i)).frame for i in range(n)]


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
    # an address-space cap of 1.5 GiB, which an allocation sized from either claim would break (under
    # AddressSanitizer, a cap on each allocation: tests/address_space.py).
    for claim in (b"\xdb\xff\xff\xff\xff", b"\xc6\x7f\xff\xff\xff"):
        frame = _frames(1)[0]
        at = frame.index(b"\xa4team") + 5
        path = tmp_path / f"claim{claim[0]:x}.bin"
        path.write_bytes(encode_header(header())[1] + frame[:at] + claim + frame[at:] + _frames(2)[1])
        code = f"""
            from tests.address_space import cap
            cap(1536 << 20)
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


def _stream(n: int = 3) -> bytes:
    return encode_header(header())[1] + b"".join(_frames(n))


@pytest.mark.parametrize(
    ("field", "offset"),
    [(b"\xaacheckpoint\xa2", 12), (b"\xa6blake3\xd9\x40", 9), (b"\xa4mean\xcb", 13)],
    ids=["checkpoint name", "blake3 digit", "mean's last bit"],
)
def test_a_flipped_bit_in_a_key_field_is_named_by_verify_hashes(tmp_path, field, offset):
    stream = bytearray(_stream())
    stream[stream.rindex(field) + offset] ^= 0x01  # in the last record: c2 -> b2, a hash digit, the mean's lowest bit
    path = tmp_path / "t.bin"
    path.write_bytes(bytes(stream))
    assert validate(open_trace(path)).problems == []  # a well-formed record: nothing else can see it
    problems = [p.message for p in validate(open_trace(path), verify_hashes=True).problems]
    assert "frame checksum (CRC-32C)" in problems[0] and "damaged" in problems[0]  # then what the data says


def test_a_frame_without_its_checksum_or_with_a_damaged_key_is_a_problem_in_schema_2(tmp_path):
    stream = _stream()
    cut = stream.rindex(b"\xa6crc32c")
    unkeyed = stream[:cut] + b"\xa6crc32d" + stream[cut + 7 :]  # the key's name damaged
    path = tmp_path / "t.bin"
    path.write_bytes(unkeyed)
    [problem] = validate(open_trace(path), verify_hashes=True).problems
    assert "frame has no checksum (crc32c)" in problem.message


def test_frames_of_schema_1_have_no_checksum_and_read_without_complaint(repo_root):
    path = repo_root / "tests" / "read" / "data" / "schema1_trace.bin"  # written before schema 2, kept as it was
    trace = open_trace(path)
    report = validate(trace, verify_hashes=True)
    assert trace.header is not None
    assert trace.header["orchlog"] == 1 and report.records > 0 and report.hashes_checked == report.records
    assert report.problems == []


def test_the_run_headers_checksum_is_checked_on_every_read(tmp_path):
    stream = bytearray(_stream())
    stream[stream.index(b"python")] ^= 0x20  # the producer's language, in the header
    path = tmp_path / "t.bin"
    path.write_bytes(bytes(stream))
    trace = open_trace(path)
    assert len(list(trace)) == 3
    assert any("run header: frame checksum (CRC-32C)" in d.message for d in trace.diagnostics)


def test_crc32c_matches_the_standard_check_value_natively_and_in_python():
    assert crc32c(b"123456789") == crc32c(b"123456789", native=False) == 0xE3069283
    data = np.random.default_rng(0).bytes(10_001)
    assert crc32c(data[5000:], crc32c(data[:5000])) == crc32c(data) == crc32c(data, native=False)
