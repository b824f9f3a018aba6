"""torch.save files read by walking data.pkl's opcodes: tensors come out as torch.load gives them, and any
pickle that would run code, or that lies about a length, is refused with one line."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest
import torch

from orchlog.read.torch_file import TensorRef, UnsafePickle, is_torch_zip, read_torch_file


def _save(tmp_path, obj, name="x.pt"):
    path = tmp_path / name
    torch.save(obj, path)
    return path


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int32, torch.int64],
)
def test_each_dtype_reads_back_the_bytes_torch_load_gives(tmp_path, dtype):
    t = (torch.randn(3, 5) * 20).to(dtype)
    ref = read_torch_file(_save(tmp_path, t))
    assert isinstance(ref, TensorRef) and ref.shape == (3, 5)
    want = torch.load(tmp_path / "x.pt", weights_only=True)
    assert ref.load() == want.contiguous().view(torch.uint8).numpy().tobytes()


def test_views_with_an_offset_and_strides_are_gathered_into_c_order(tmp_path):
    base = torch.arange(60, dtype=torch.float32).reshape(5, 12)
    view = base[1:4, 2:11:3].t()  # offset, a step and a transpose: not contiguous
    ref = read_torch_file(_save(tmp_path, {"v": view, "base": base}))["v"]
    assert ref.shape == (3, 3) and ref.offset > 0
    np.testing.assert_array_equal(ref.array(), view.numpy())


def test_parameters_bools_int16_and_nested_containers_come_back_as_plain_values(tmp_path):
    obj = {
        "p": torch.nn.Parameter(torch.ones(2)),
        "mask": torch.tensor([True, False, True]),
        "short": torch.tensor([-3, 7], dtype=torch.int16),
        "meta": {"name": "x", "n": 3, "f": 0.5, "ok": True, "none": None, "t": (1, 2), "l": [1, "a"]},
        "size": torch.Size([2, 3]),
    }
    out = read_torch_file(_save(tmp_path, obj))
    assert out["meta"] == {"name": "x", "n": 3, "f": 0.5, "ok": True, "none": None, "t": (1, 2), "l": [1, "a"]}
    assert out["size"] == (2, 3)
    np.testing.assert_array_equal(out["p"].array(), [1.0, 1.0])
    assert out["mask"].dtype == "u8" and out["mask"].array().tolist() == [1, 0, 1]
    assert out["short"].dtype == "i32" and out["short"].array().tolist() == [-3, 7]


def test_a_torch_file_is_recognised_by_its_first_zip_member():
    buf = io.BytesIO()
    torch.save(torch.ones(1), buf)
    assert is_torch_zip(buf.getvalue()[:4096])
    assert not is_torch_zip(b"PK\x03\x04" + b"\0" * 40)


def _with_pickle(tmp_path, data_pkl: bytes, storages: dict[str, bytes] | None = None, name="bad.pt"):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("bad/data.pkl", data_pkl)
        zf.writestr("bad/byteorder", "little")
        for key, raw in (storages or {}).items():
            zf.writestr(f"bad/data/{key}", raw)
    return path


class _Runs:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


@pytest.mark.parametrize(
    "payload, message",
    [
        (pickle.dumps(_Runs(), protocol=2), "posix.system"),
        (pickle.dumps(_Runs(), protocol=4), "posix.system"),
        (b"\x80\x02cbuiltins\neval\nX\x04\x00\x00\x001+1\x85R.", "builtins.eval"),
        (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n)R.", "without a storage"),
        (b"\x80\x02}X\x00\x00\x10\x00abc", "past its end"),  # a string claiming 1 MiB
        (b"\x80\x02]q\x00h\x01.", "never stored"),
        (b"\x80\x02(.", "inside a MARK"),
        (b"\x80\x02\x81.", "not one tensor dumps use"),  # NEWOBJ
        (b"\x80\x02}b.", "not one tensor dumps use"),  # BUILD
        (b"\x80\x02N", "without STOP"),
        (b"\x80\x02.", "empty stack"),
    ],
)
def test_pickles_that_would_run_code_or_lie_are_refused_with_one_line(tmp_path, payload, message):
    with pytest.raises(UnsafePickle, match=message) as err:
        read_torch_file(_with_pickle(tmp_path, payload))
    assert "\n" not in str(err.value)


def _tensor_pickle(numel: int, offset: int, size: int) -> bytes:
    return (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
        b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuJ" + numel.to_bytes(4, "little") + b"tQ"
        b"J" + offset.to_bytes(4, "little") + b"J" + size.to_bytes(4, "little") + b"\x85K\x01\x85\x89)tR."
    )


def test_a_storage_longer_than_its_member_and_a_tensor_past_its_storage_are_refused(tmp_path):
    good = _with_pickle(tmp_path, _tensor_pickle(4, 1, 3), {"0": np.arange(4, dtype="<f4").tobytes()}, "good.pt")
    np.testing.assert_array_equal(read_torch_file(good).array(), [1.0, 2.0, 3.0])
    with pytest.raises(UnsafePickle, match="declares 1000 elements"):
        read_torch_file(_with_pickle(tmp_path, _tensor_pickle(1000, 0, 4), {"0": bytes(16)}))
    with pytest.raises(UnsafePickle, match="reaches past its storage"):
        read_torch_file(_with_pickle(tmp_path, _tensor_pickle(4, 2, 3), {"0": bytes(16)}))


def test_a_compressed_member_and_a_damaged_archive_are_refused(tmp_path):
    path = tmp_path / "deflated.pt"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a/data.pkl", pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(UnsafePickle, match="compressed"):
        read_torch_file(path)
    damaged = tmp_path / "cut.pt"
    damaged.write_bytes(_save(tmp_path, torch.ones(3)).read_bytes()[:100])
    with pytest.raises(OSError, match="damaged zip"):
        read_torch_file(damaged)
