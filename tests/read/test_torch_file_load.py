"""A torch file's tensor loaded after its archive was read: found where the archive's directory placed it
(not by parsing the directory again: a tool that writes a file per tensor loads thousands), with the
checks zipfile makes there. A file changed, damaged or cut since it was read gives an OSError that says
so, never other bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from orchlog.read.torch_file import TensorRef, read_torch_file


def _ref(tmp_path, t, name="x.pt") -> tuple[TensorRef, bytes]:
    path = tmp_path / name
    torch.save(t, path)
    ref = read_torch_file(path)
    assert isinstance(ref, TensorRef) and ref.stored is not None
    return ref, t.contiguous().view(torch.uint8).numpy().tobytes()


def test_the_bytes_come_from_where_the_directory_says(tmp_path):
    ref, want = _ref(tmp_path, torch.arange(12, dtype=torch.float32).reshape(3, 4))
    assert ref.load() == want


def test_a_flipped_byte_in_the_tensor_fails_its_crc(tmp_path):
    ref, want = _ref(tmp_path, torch.arange(256, dtype=torch.float32))
    data = bytearray(open(ref.path, "rb").read())
    at = bytes(data).index(want[:64]) + 100
    data[at] ^= 0x40
    open(ref.path, "wb").write(bytes(data))
    with pytest.raises(OSError, match="damaged zip archive .*CRC"):
        ref.load()


def test_a_file_cut_inside_the_tensor_says_so(tmp_path):
    ref, want = _ref(tmp_path, torch.arange(256, dtype=torch.float32))
    data = open(ref.path, "rb").read()
    os.truncate(ref.path, data.index(want[:64]) + 500)
    with pytest.raises(OSError, match="damaged zip archive"):
        ref.load()


def test_a_file_rewritten_since_it_was_read_is_read_through_its_new_directory(tmp_path):
    """Another dump saved under the same name: no local header names the member where it was, so the
    archive's directory is read again, and what the member holds now (64 floats) is too short for the
    tensor that was read (256)."""
    ref, _ = _ref(tmp_path, torch.arange(256, dtype=torch.float32))
    torch.save({"first": torch.zeros(64), "x": torch.full((256,), 7.0)}, ref.path)
    with pytest.raises(OSError, match="holds 256 bytes, the tensor needs 1024"):
        ref.load()


def test_a_file_swapped_for_a_fifo_is_refused_not_waited_on(tmp_path):
    ref, _ = _ref(tmp_path, torch.arange(16, dtype=torch.float32))
    os.remove(ref.path)
    os.mkfifo(ref.path)  # no writer: an open for reading that blocks would wait for ever
    with pytest.raises(OSError, match="not a regular file"):
        ref.load()
    with pytest.raises(OSError, match="not a regular file"):
        read_torch_file(Path(ref.path))
