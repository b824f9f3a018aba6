"""Safetensors headers read lazily, every declared length checked against the file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from orchlog.read.safetensors_file import read_header


def test_tensors_read_back_as_saved(tmp_path):
    path = tmp_path / "t.safetensors"
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    save_file({"data": data, "ids": np.array([1, 2], dtype=np.int64)}, str(path))
    tensors = read_header(path)
    assert tensors["data"].shape == (3, 4) and tensors["ids"].dtype == "i64"
    assert np.frombuffer(tensors["data"](), dtype="<f4").reshape(3, 4).tolist() == data.tolist()


def _file(tmp_path, header: dict, data: bytes = b"", length: int | None = None):
    raw = json.dumps(header).encode()
    path = tmp_path / "bad.safetensors"
    path.write_bytes((len(raw) if length is None else length).to_bytes(8, "little") + raw + data)
    return path


@pytest.mark.parametrize(
    "header, data, length, message",
    [
        ({}, b"", 2**40, "declares a header of"),
        ({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8, None, "the file holds 8"),
        ({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 12]}}, b"\0" * 16, None, "for 4 f32 elements"),
        ({"x": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0", None, "does not read"),
        ({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4, None, "no valid shape"),
        ([1, 2], b"", None, "not a JSON object"),
    ],
)
def test_headers_that_lie_are_refused(tmp_path, header, data, length, message):
    with pytest.raises(ValueError, match=message):
        read_header(_file(tmp_path, header, data, length))
