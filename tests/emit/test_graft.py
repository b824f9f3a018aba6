"""orchlog.graft: selected arrays are overwritten from a full-mode reference trace and their records marked."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import orchlog
from orchlog.emit import api
from orchlog.encoding.record import RecordInput, encode_record
from orchlog.read.paths import open_trace

RUN: dict[str, Any] = {
    "team": "t",
    "values": 10,
    "select": "",
    "rank": 0,
    "world_size": 1,
    "model": "",
    "git_commit": "",
}


@pytest.fixture
def reference(tmp_path):
    """attn_norm at layers 0-3 (random values), and `wide` of 5 elements at layer 1."""
    rng = np.random.default_rng(14)
    tensors = {layer: rng.standard_normal((2, 3)).astype(np.float32) for layer in range(4)}
    path = tmp_path / "ref.bin"
    assert orchlog.configure(path=str(path), mode="full", **RUN)
    for layer, x in tensors.items():
        assert orchlog.log("attn_norm", x, 0, layer)
    assert orchlog.log("wide", np.ones(5, np.float32), 0, 1)
    orchlog.close()
    yield path, tensors
    orchlog.close()


def _graft_run(tmp_path, reference_path, select, mode="summary"):
    out = tmp_path / ("run.jsonl" if mode == "summary" else "run.bin")
    assert orchlog.configure(path=str(out), mode=mode, graft_from=str(reference_path), graft_select=select, **RUN)
    return out


def test_a_graft_overwrites_exactly_the_selected_arrays_and_the_log_marks_them(tmp_path, reference):
    ref_path, tensors = reference
    out = _graft_run(tmp_path, ref_path, "checkpoint=attn_norm,layer=1-2", mode="full")
    ours = {layer: np.full((2, 3), -1.0, np.float32) for layer in range(4)}
    grafted = [orchlog.graft("attn_norm", ours[layer], 0, layer) for layer in range(4)]
    orchlog.close()
    assert grafted == [False, True, True, False]
    for layer in range(4):
        want = tensors[layer] if layer in (1, 2) else np.full((2, 3), -1.0, np.float32)
        np.testing.assert_array_equal(ours[layer], want)
    records = list(open_trace(out))
    assert [r.grafted for r in records] == grafted
    assert [r.layer for r in records] == [0, 1, 2, 3]


def test_the_written_record_is_the_reference_encoders_with_grafted_true(tmp_path, reference, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767323045")
    ref_path, tensors = reference
    out = _graft_run(tmp_path, ref_path, "layer=3")
    x = np.zeros((2, 3), np.float32)
    assert orchlog.graft("attn_norm", x, 0, 3)
    orchlog.close()
    line = out.read_bytes().splitlines(keepends=True)[1]
    given = RecordInput(
        checkpoint="attn_norm", dtype="f32", shape=(2, 3), data=tensors[3].tobytes(), team="t", token_idx=0, layer=3
    )
    given.grafted = True
    want = encode_record(given)
    assert line == want.jsonl


def test_a_wrong_shape_leaves_the_array_unchanged_and_warns_once(tmp_path, reference, capfd):
    ref_path, _ = reference
    _graft_run(tmp_path, ref_path, "checkpoint=wide")
    x = np.full((2, 3), 4.0, np.float32)
    errors = api.stats().errors
    assert not orchlog.graft("wide", x, 0, 1)
    assert not orchlog.graft("wide", x.reshape(6), 0, 1)  # a second call under the key: no second record
    orchlog.close()
    np.testing.assert_array_equal(x, np.full((2, 3), 4.0, np.float32))
    assert api.stats().errors - errors == 2
    warnings = [line for line in capfd.readouterr().err.splitlines() if line.startswith("orchlog: warning:")]
    shape_warnings = [w for w in warnings if "the reference record is f32 [5], the tensor f32 [2,3]" in w]
    assert len(shape_warnings) <= 1  # printed once per process, whatever ran before


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_an_f32_reference_is_converted_to_the_arrays_dtype(tmp_path, reference, dtype):
    ref_path, tensors = reference
    _graft_run(tmp_path, ref_path, "layer=0")
    x = np.zeros((2, 3), dtype)
    assert orchlog.graft("attn_norm", x, 0, 0)
    orchlog.close()
    np.testing.assert_array_equal(x, tensors[0].astype(dtype))


def test_bf16_bits_are_grafted_with_round_to_nearest_even(tmp_path, reference):
    torch = pytest.importorskip("torch")
    ref_path, tensors = reference
    _graft_run(tmp_path, ref_path, "layer=2")
    bits = np.zeros((2, 3), np.uint16)
    assert orchlog.graft("attn_norm", bits, 0, 2, dtype="bf16")
    orchlog.close()
    want = torch.from_numpy(tensors[2]).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(bits, want)


def test_without_a_selector_nothing_is_grafted_and_the_run_says_so_once(tmp_path, reference, capfd):
    ref_path, _ = reference
    capfd.readouterr()
    _graft_run(tmp_path, ref_path, None)
    x = np.zeros((2, 3), np.float32)
    assert not orchlog.graft("attn_norm", x, 0, 1)
    assert not orchlog.graft("attn_norm", x, 0, 2)
    orchlog.close()
    assert not x.any()
    said = [line for line in capfd.readouterr().err.splitlines() if "ORCH_GRAFT_SELECT" in line]
    assert said == [
        "orchlog: warning: ORCH_GRAFT_FROM names a reference but ORCH_GRAFT_SELECT selects nothing to graft; "
        "grafting nothing (e.g. ORCH_GRAFT_SELECT=checkpoint=attn_norm,layer=3)"
    ]


def test_a_read_only_array_is_not_grafted_and_nothing_raises(tmp_path, reference):
    ref_path, _ = reference
    _graft_run(tmp_path, ref_path, "layer=1")
    x = np.zeros((2, 3), np.float32)
    x.setflags(write=False)
    assert not orchlog.graft("attn_norm", x, 0, 1)
    orchlog.close()
    assert not x.any()


def test_graft_off_writes_nothing_and_changes_nothing(tmp_path, reference):
    ref_path, _ = reference
    assert not orchlog.configure(path="", graft_from=str(ref_path), graft_select="layer=1")
    x = np.zeros((2, 3), np.float32)
    assert not orchlog.graft("attn_norm", x, 0, 1)
    assert not x.any()
