"""The fast path over torch.save archives (orchlog/read/stored_zip.py) against zipfile: it reads what
torch.save writes, steps aside for anything unusual, and never accepts an archive zipfile refuses nor
reads one differently (random damage to real archives, hypothesis)."""

from __future__ import annotations

import io
import os
import struct
import zipfile
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from orchlog.read import torch_file
from orchlog.read.stored_zip import open_stored
from orchlog.read.torch_file import TensorRef, UnsafePickle, read_torch_file

SGLANG = Path(__file__).parent / "data" / "tools" / "sglang-clean" / "dump_micro"


def _both(path: Path) -> tuple[object, object]:
    """What the fast path gives (None: it stepped aside) and what zipfile gives (or the error it raised)."""
    with open(path, "rb") as f:
        fast = torch_file._read_stored_archive(f.fileno())
        try:
            with zipfile.ZipFile(f) as zf:
                slow: object = torch_file._read_archive(zf)
        except (*torch_file.ZIP_ERRORS, UnsafePickle, OSError, ValueError) as exc:
            slow = exc
    return fast, slow


def test_every_file_of_a_real_dump_takes_the_fast_path_and_reads_as_zipfile_reads_it():
    files = sorted(SGLANG.iterdir())
    assert len(files) > 50
    for path in files:
        fast, slow = _both(path)
        assert fast is not None and fast == slow, path.name


def test_a_large_tensor_is_read_past_the_end_of_the_file_with_pread(tmp_path):
    # 256 KiB of tensor: data.pkl and its local header lie before the 64 KiB read from the end.
    path = tmp_path / "big.pt"
    torch.save({"x": torch.arange(65536, dtype=torch.float32)}, path)
    fast, slow = _both(path)
    assert fast is not None and fast == slow
    ref = read_torch_file(path)["x"]
    assert isinstance(ref, TensorRef) and ref.load() == torch.arange(65536, dtype=torch.float32).numpy().tobytes()


@pytest.mark.parametrize(
    "what, edit, archive_edit",
    [
        ("a deflated member", lambda i, d: (i, d, zipfile.ZIP_DEFLATED), None),
        ("an extra field", lambda i, d: (_with_extra(i), d), None),
        ("an archive comment", lambda i, d: (i, d), lambda z: setattr(z, "comment", b"made by hand")),
    ],
)
def test_an_archive_torch_save_does_not_write_goes_to_zipfile(tmp_path, what, edit, archive_edit):
    src = tmp_path / "src.pt"
    torch.save({"x": torch.ones(4)}, src)
    out = tmp_path / "edited.pt"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            zout.writestr(*edit(_copy(info), zin.read(info)))
        if archive_edit:
            archive_edit(zout)
    with open(out, "rb") as f:
        assert open_stored(f.fileno()) is None, what
    fast, slow = _both(out)
    assert fast is None
    if isinstance(slow, Exception):
        with pytest.raises((OSError, UnsafePickle)):
            read_torch_file(out)
    else:
        assert read_torch_file(out)["x"].load() == torch.ones(4).numpy().tobytes()


def _copy(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    new = zipfile.ZipInfo(info.filename, info.date_time)
    new.compress_type = zipfile.ZIP_STORED
    return new


def _with_extra(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    info.extra = struct.pack("<HH", 0xCAFE, 4) + b"orch"
    return info


def test_two_members_over_one_span_of_bytes_go_to_zipfile(tmp_path):
    # The second directory entry is pointed at the first member's local header: a zip bomb's trick.
    path = tmp_path / "x.pt"
    torch.save({"x": torch.ones(4)}, path)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        start_dir = zf.start_dir
    second = data.index(b"PK\x01\x02", start_dir + 1)
    struct.pack_into("<L", data, second + 42, 0)  # its local header offset
    path.write_bytes(bytes(data))
    with open(path, "rb") as f:
        assert open_stored(f.fileno()) is None


def _seed() -> tuple[bytes, int]:
    """The smallest file of the real dump, and where its central directory starts."""
    data = min(SGLANG.iterdir(), key=lambda p: p.stat().st_size).read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return data, zf.start_dir


SEED, SEED_DIRECTORY = _seed()


def test_each_byte_of_the_directory_and_end_records_flipped_alone(tmp_path):
    # Every byte the fast path parses itself, with its lowest and its highest bit flipped in turn.
    path = tmp_path / "flipped.pt"
    path.write_bytes(SEED)
    accepted = 0
    with open(path, "r+b") as f:
        for at in range(SEED_DIRECTORY, len(SEED)):
            for mask in (0x01, 0x80):
                os.pwrite(f.fileno(), bytes([SEED[at] ^ mask]), at)
                fast, slow = _both(path)
                if fast is not None:
                    accepted += 1
                    assert not isinstance(slow, Exception) and fast == slow, (at, mask, slow)
            os.pwrite(f.fileno(), SEED[at : at + 1], at)
    assert accepted  # dates, attributes and versions are not checked by either reader


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(flips=[(9841, 129)], cut=None, tail=b"", in_directory=False)  # zipfile: "cannot fit 'int' into an offset"
@given(
    flips=st.lists(st.tuples(st.integers(0, 9999), st.integers(1, 255)), max_size=4),  # where: in 1/10,000ths
    cut=st.one_of(st.none(), st.integers(0, 9999)),
    tail=st.binary(max_size=8),
    in_directory=st.booleans(),
)
def test_damaged_archives_are_never_accepted_by_the_fast_path_alone(tmp_path, flips, cut, tail, in_directory):
    data = bytearray(SEED)
    # Half the flips land in the directory and the end records, where the fast path does its own reading.
    low = SEED_DIRECTORY if in_directory else 0
    for at, xor in flips:
        data[low + at * (len(data) - low) // 10_000] ^= xor
    if cut is not None:
        del data[cut * len(data) // 10_000 :]
    data += tail
    path = tmp_path / "mutant.pt"
    path.write_bytes(bytes(data))
    fast, slow = _both(path)
    if fast is not None:
        assert not isinstance(slow, Exception), f"zipfile refuses what the fast path read: {slow!r}"
        assert fast == slow
    os.unlink(path)
