"""orchlog.log and orchlog.configure: what the Python emitter accepts and writes."""

from __future__ import annotations

import array
import ctypes
import math
from typing import Any

import numpy as np
import pytest

import orchlog
from orchlog.emit import api as emitter
from orchlog.encoding.record import RecordInput, encode_record
from orchlog.errors import OrchlogError


@pytest.fixture
def run(tmp_path):
    """A summary run in tmp_path, independent of the ORCH_LOG_* variables around the test."""
    path = tmp_path / "trace.jsonl"

    def start(**options):
        settings: dict[str, Any] = dict(
            path=str(path),
            team="py",
            values=10,
            mode="summary",
            select="",
            rank=0,
            world_size=1,
            model="",
            git_commit="",
        )
        settings.update(options)
        assert orchlog.configure(**settings)
        return path

    yield start
    emitter.close()


def _records(path):
    emitter.close()
    trace = orchlog.open_trace(path)
    records = list(trace)
    assert not trace.diagnostics
    return records


def _expected_line(checkpoint, arr, seq, dtype=None, **key):
    data = np.ascontiguousarray(arr)
    dtype = (
        dtype
        or {
            "float32": "f32",
            "float16": "f16",
            "float64": "f64",
            "int64": "i64",
            "int32": "i32",
            "uint8": "u8",
            "int8": "i8",
        }[data.dtype.name]
    )
    return encode_record(
        RecordInput(
            checkpoint=checkpoint,
            dtype=dtype,
            shape=data.shape,
            data=data.astype(data.dtype.newbyteorder("<")).tobytes(),
            team="py",
            seq=seq,
            **key,
        )
    ).jsonl


def test_a_logged_array_reads_back_with_its_key_and_exact_line(run):
    path = run()
    x = np.linspace(-2, 2, 896, dtype=np.float32).reshape(1, 896)
    assert orchlog.log("attn_norm", x, token_idx=5, layer=3, stage="rope", step=0, meta={"kv_aligned": 1})
    lines = path.read_bytes().splitlines(keepends=True)
    assert (
        lines[1]
        == encode_record(
            RecordInput(
                checkpoint="attn_norm",
                dtype="f32",
                shape=(1, 896),
                data=x.tobytes(),
                team="py",
                token_idx=5,
                layer=3,
                stage="rope",
                step=0,
                meta={"kv_aligned": 1},
            )
        ).jsonl
    )
    (rec,) = _records(path)
    assert (rec.checkpoint, rec.token_idx, rec.layer, rec.stage, rec.step) == ("attn_norm", 5, 3, "rope", 0)


def test_non_contiguous_and_big_endian_arrays_are_hashed_as_contiguous_little_endian(run):
    path = run()
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert orchlog.log("transposed", x.T)
    assert orchlog.log("strided", x[:, ::2])
    assert orchlog.log("big_endian", x.astype(">f4"))
    lines = path.read_bytes().splitlines(keepends=True)[1:]
    assert lines[0] == _expected_line("transposed", x.T, 0)
    assert lines[1] == _expected_line("strided", x[:, ::2], 1)
    assert lines[2] == _expected_line("big_endian", x, 2)


def test_buffer_protocol_objects_need_no_numpy(run):
    path = run()
    assert orchlog.log("floats", array.array("f", [1.5, -2.0, 3.25]))
    assert orchlog.log("bytes", b"\x01\x02\xff")
    assert orchlog.log("scalar", np.float64(2.5))
    recs = _records(path)
    assert [(r.dtype, r.shape) for r in recs] == [("f32", (3,)), ("u8", (3,)), ("f64", ())]
    assert recs[0].values.tolist() == [1.5, -2.0, 3.25]


class _DLPackOnly:
    """Something that offers only __dlpack__, as a torch CPU tensor does."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, stream=None):
        return self._arr.__dlpack__()

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_dlpack_tensors_are_read_including_strided_ones(run):
    path = run()
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert orchlog.log("dlpack", _DLPackOnly(x))
    assert orchlog.log("dlpack_t", _DLPackOnly(x.T))
    lines = path.read_bytes().splitlines(keepends=True)[1:]
    assert lines == [_expected_line("dlpack", x, 0), _expected_line("dlpack_t", x.T, 1)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _BF16Producer:
    """A hand-made DLPack producer of a bfloat16 tensor (what torch.bfloat16 exports)."""

    def __init__(self, bits: np.ndarray, device_type: int = 1):
        self.bits = np.ascontiguousarray(bits, dtype="<u2")
        self.shape = (ctypes.c_int64 * self.bits.ndim)(*self.bits.shape)
        self.managed = _DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.device_type, t.ndim = self.bits.ctypes.data, device_type, self.bits.ndim
        t.code, t.bits, t.lanes, t.shape = 4, 16, 1, self.shape  # kDLBfloat

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)


def test_a_bf16_dlpack_tensor_is_logged_as_bf16_without_a_dtype_hint(run):
    path = run()
    bits = np.array([[0x3F80, 0xC040], [0x7FC0, 0x0000]], dtype=np.uint16)  # 1.0, -3.0, NaN, 0
    assert orchlog.log("bf16", _BF16Producer(bits))
    assert path.read_bytes().splitlines(keepends=True)[1] == _expected_line("bf16", bits, 0, dtype="bf16")


def test_torch_cpu_tensors_are_read_through_dlpack_including_bf16_and_transposed(run):
    torch = pytest.importorskip("torch", reason="torch is not installed here (the e2e extra brings it)")
    path = run()
    t = torch.linspace(-2, 2, 12, dtype=torch.float32).reshape(3, 4)
    b = t.to(torch.bfloat16)
    assert orchlog.log("f32", t)
    assert orchlog.log("bf16", b)
    assert orchlog.log("bf16_t", b.T)
    bits = b.view(torch.int16).numpy().view(np.uint16)
    lines = path.read_bytes().splitlines(keepends=True)[1:]
    assert lines == [
        _expected_line("f32", t.numpy(), 0),
        _expected_line("bf16", bits, 1, dtype="bf16"),
        _expected_line("bf16_t", bits.T, 2, dtype="bf16"),
    ]


def test_dtype_reinterprets_same_sized_elements(run):
    path = run()
    bits = np.array([0x3F80, 0x4000], dtype=np.uint16)
    assert orchlog.log("as_bf16", bits, dtype="bf16")
    (rec,) = _records(path)
    assert rec.dtype == "bf16" and rec.values.tolist() == [1.0, 2.0]


def test_bad_arguments_warn_once_count_and_never_raise(run, capfd):
    run()
    before = emitter.stats().errors
    assert orchlog.log("str", "not an array") is False
    assert orchlog.log("size", np.zeros(3, dtype=np.uint16), dtype="f32") is False
    assert orchlog.log("meta", np.zeros(3), meta={"x": [1]}) is False  # type: ignore[dict-item]  # wrong on purpose
    assert orchlog.log("gpu", _BF16Producer(np.zeros(2, dtype=np.uint16), device_type=2)) is False
    assert orchlog.log(42, np.zeros(3)) is False  # type: ignore[arg-type]  # wrong on purpose
    assert emitter.stats().errors == before + 5
    warnings = [line for line in capfd.readouterr().err.splitlines() if line.startswith("orchlog: warning:")]
    assert len(warnings) == 1 and "neither the buffer protocol nor __dlpack__" in warnings[0]
    assert orchlog.log("fine", np.zeros(3))


def test_negative_key_values_mean_none_and_bytes_names_are_repaired(run):
    path = run()
    assert orchlog.log(b"bad\xffname", np.ones(2, dtype=np.float32), token_idx=-1, layer=-1)
    (rec,) = _records(path)
    assert rec.checkpoint == "bad\ufffdname" and rec.token_idx is None and rec.layer is None


def test_key_values_beyond_their_field_type_mean_none_as_in_every_emitter(run):
    path = run()
    errors_before = emitter.stats().errors
    assert orchlog.log("big", np.ones(2, dtype=np.float32), token_idx=2**63, layer=2**31, step=-(2**70))
    assert orchlog.log("fits", np.ones(2, dtype=np.float32), token_idx=2**63 - 1, layer=2**31 - 1, step=0)
    big, fits = _records(path)
    assert (big.token_idx, big.layer, big.step) == (None, None, None)
    assert (fits.token_idx, fits.layer, fits.step) == (2**63 - 1, 2**31 - 1, 0)
    assert emitter.stats().errors == errors_before


def test_configure_takes_every_knob_and_writes_them_into_the_header(run, tmp_path):
    path = run(
        team="eng",
        values="all",
        rank=2,
        world_size=4,
        model="m.gguf",
        git_commit="abc",
        select="layer=0-1",
        config={"seed": 7, "temp": 0.5},
    )
    assert orchlog.log("a", np.arange(20, dtype=np.float32), layer=1)
    assert not orchlog.log("a", np.arange(20, dtype=np.float32), layer=2)
    emitter.close()
    trace = orchlog.open_trace(path)
    (rec,) = list(trace)
    assert trace.header is not None
    assert trace.header == {
        "orchlog": orchlog.SCHEMA_VERSION,
        "producer": {"language": "python", "name": "orchlog", "version": orchlog.__version__},
        "team": "eng",
        "model": "m.gguf",
        "git_commit": "abc",
        "created": trace.header["created"],
        "rank": 2,
        "world_size": 4,
        "values": -1,
        "select": "layer=0-1",
        "config": {"seed": 7, "temp": 0.5},
    }
    assert rec.values is not None
    assert len(rec.values) == 20 and rec.rank == 2 and rec.world_size == 4


def test_both_mode_writes_a_binary_stream_with_the_full_tensor(run):
    path = run(mode="both")
    x = np.random.default_rng(1).standard_normal((3, 50)).astype(np.float32)
    assert orchlog.log("full", x)
    assert emitter.stats().binary_path == str(path) + ".bin"
    (rec,) = _records(str(path) + ".bin")
    np.testing.assert_array_equal(rec.tensor(), x)


@pytest.mark.parametrize(
    "bad",
    [
        dict(values=-2),
        dict(values="ALL"),
        dict(mode="binary"),
        dict(rank=-1),
        dict(world_size=0),
        dict(select="layer=3-1"),
        dict(select="colour=red"),
        dict(config={"x": None}),
        dict(path=3),
    ],
)
def test_configure_rejects_bad_settings_with_a_clear_error(bad):
    with pytest.raises(OrchlogError):
        orchlog.configure(**bad)


def test_configure_is_keyword_only_and_rejects_unknown_options():
    with pytest.raises(TypeError):
        orchlog.configure("trace.jsonl")  # type: ignore[arg-type, call-arg]  # wrong on purpose
    with pytest.raises(TypeError, match="fromat"):
        orchlog.configure(fromat="parquet")  # type: ignore[call-arg]  # wrong on purpose


def test_without_a_path_logging_is_off_and_log_returns_false():
    assert orchlog.configure(path="") is False
    assert orchlog.log("x", np.ones(1)) is False
    assert emitter.stats().enabled is False


def test_stats_counts_the_records_of_the_current_run(run):
    run()
    for i in range(3):
        orchlog.log("x", np.full(4, i, dtype=np.float32))
    stats = emitter.stats()
    assert stats.path is not None
    assert stats.enabled and stats.records == 3 and stats.path.endswith("trace.jsonl")
    assert emitter.flush()


def test_nan_and_infinity_survive_into_json_as_strings(run):
    path = run()
    orchlog.log("special", np.array([math.nan, math.inf, -math.inf, -0.0], dtype=np.float32))
    line = path.read_text().splitlines()[1]
    assert '"values":["NaN","Infinity","-Infinity",-0.0]' in line
