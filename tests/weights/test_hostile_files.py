"""Hostile weight files: each is one clear error (OrchlogError, exit 2 from the command), never an exception
from inside json, NumPy, zipfile or the gguf package, never a hang; a FIFO is refused without blocking."""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from orchlog.errors import OrchlogError
from orchlog.weights.source import open_weights
from tests.weights.models import gguf_weights, write_gguf


def _safetensors(path, header: bytes | dict, data: bytes = b"\0" * 16):
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + data)
    return path


def _entry(**kw):
    return {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16], **kw}}


SAFETENSORS = {
    "dtype a number": (_entry(dtype=3), "malformed header entry"),
    "offsets a text": (_entry(data_offsets="0,16"), "malformed header entry"),
    "offsets of three": (_entry(data_offsets=[0, 8, 16]), "malformed header entry"),
    "shape of 1e400": (b'{"w":{"dtype":"F32","shape":[1e400],"data_offsets":[0,16]}}', "not a safetensors file"),
    "shape of 2**70": (_entry(shape=[2**70]), "malformed header entry"),
    "negative shape": (_entry(shape=[-4]), "malformed header entry"),
    "shape wrapping to 0 in 64 bits": (_entry(shape=[2**32, 2**32]), "16 bytes for shape"),
    "65 dimensions": (_entry(shape=[1] * 65), "malformed header entry"),
    "negative offsets": (_entry(data_offsets=[-8, 8]), "malformed header entry"),
    "offsets past the file": (_entry(data_offsets=[16, 32]), "not inside the file"),
    "entry not an object": ({"w": [1, 2]}, "malformed header entry"),
    "deep header": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "its header is not JSON"),
    "unknown dtype": (_entry(dtype="F8_E4M3"), "which orchlog weights does not read"),
}


@pytest.mark.parametrize("case", SAFETENSORS, ids=str)
def test_a_hostile_safetensors_header_is_one_clear_error(case, tmp_path):
    header, words = SAFETENSORS[case]
    with pytest.raises(OrchlogError, match=words):
        open_weights(_safetensors(tmp_path / "m.safetensors", header))


def _npy(array_header: str, data: bytes) -> bytes:
    text = array_header.encode("latin1")
    text += b" " * (-(len(text) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + data


def _npz(path, members: dict[str, bytes]):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, body in members.items():
            z.writestr(name, body)
    path.write_bytes(buf.getvalue())
    return path


NPZ = {
    "text dtype": ({"w.npy": _npy("{'descr': '<U4', 'fortran_order': False, 'shape': (2,), }", b"\0" * 32)}, "numbers"),
    "structured dtype": (
        {"w.npy": _npy("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }", b"\0" * 8)},
        "numbers",
    ),
    "void dtype": ({"w.npy": _npy("{'descr': '|V8', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8)}, "numbers"),
    "object dtype": ({"w.npy": _npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"")}, "pickle"),
    "raw pickle": ({"w.npy": pickle.dumps({"x": 1})}, "not a readable .npy array"),
    "pickle member": ({"evil.pkl": pickle.dumps([1])}, "is not a .npy array"),
    "huge shape": (
        {"w.npy": _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", b"")},
        "bytes of data for shape",
    ),
}


@pytest.mark.parametrize("case", NPZ, ids=str)
def test_a_hostile_npz_member_is_one_clear_error(case, tmp_path):
    members, words = NPZ[case]
    with pytest.raises(OrchlogError, match=words):
        open_weights(_npz(tmp_path / "w.npz", members))


def test_a_truncated_npy_is_called_truncated_not_pickle(tmp_path):
    full = _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", b"\0" * 32)
    path = _npz(tmp_path / "w.npz", {"w.npy": full[:-12]})
    with pytest.raises(OrchlogError, match="truncated") as caught:
        open_weights(path)
    assert "pickle" not in str(caught.value)


def _gguf(tmp_path):
    return write_gguf(tmp_path / "m.gguf", gguf_weights())


def _patched(path, at: int, value: bytes):
    data = bytearray(path.read_bytes())
    data[at : at + len(value)] = value
    out = path.with_name("patched.gguf")
    out.write_bytes(bytes(data))
    return out


def test_gguf_counts_past_the_file_are_one_clear_error(tmp_path):
    path = _gguf(tmp_path)
    for at, words in ((8, "tensors claimed"), (16, "keys claimed")):
        with pytest.raises(OrchlogError, match=words):
            open_weights(_patched(path, at, struct.pack("<Q", 2**60)))


def test_a_gguf_cut_in_half_is_one_clear_error(tmp_path):
    path = _gguf(tmp_path)
    half = tmp_path / "half.gguf"
    half.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(OrchlogError, match="not a readable GGUF file"):
        open_weights(half)


def test_a_gguf_array_claiming_billions_of_entries_is_refused_at_once(tmp_path):
    import gguf

    w = gguf.GGUFWriter(str(tmp_path / "v.gguf"), arch="qwen2")
    w.add_token_list(["a", "b", "c"])
    w.add_tensor("x", np.ones(4, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    data = (tmp_path / "v.gguf").read_bytes()
    key = data.index(b"tokenizer.ggml.tokens") + len(b"tokenizer.ggml.tokens")
    # after the key: its type (array), the item type (string), then the count
    with pytest.raises(OrchlogError, match="array of 1,152,921,504,606,846,976 entries"):
        open_weights(_patched(tmp_path / "v.gguf", key + 8, struct.pack("<Q", 2**60)))


def test_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "model.safetensors"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "orchlog", "weights", str(fifo), str(fifo), "-q"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"orchlog: error: {fifo} is a FIFO, not a regular file: orchlog reads files and directories"
    ]
