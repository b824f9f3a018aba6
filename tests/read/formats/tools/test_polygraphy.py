"""Polygraphy's RunResults JSON: base64 np.save arrays, decoded only when compared, without pickle."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from polygraphy.comparator import RunResults

from orchlog import open_trace
from tests.read.formats.tools.conftest import compare_exit
from tests.tracegen import tensor_of


def test_every_marked_output_is_a_record_named_by_its_onnx_value(tools):
    trace = open_trace(tools / "polygraphy-clean.json")
    records = list(trace)
    results = RunResults.load(str(tools / "polygraphy-clean.json"))
    runner, iterations = results[0]
    outputs = iterations[0]
    assert [r.checkpoint for r in records] == list(outputs.keys())
    assert trace.header is not None
    assert trace.header["tool"] == "polygraphy" and trace.header["config"]["runner"] == runner
    for r in records:
        np.testing.assert_array_equal(r.tensor(), outputs[r.checkpoint])
    down = [r for r in records if r.checkpoint.startswith("/model/layers/1/mlp/down_proj/")]
    assert down and {r.layer for r in down} == {1} and {r.step for r in down} == {0}


def test_the_inputs_file_is_read_as_inputs(tools):
    (r,) = list(open_trace(tools / "polygraphy-inputs.json"))
    assert (r.checkpoint, r.stage, r.dtype, tensor_of(r).tolist()) == ("input_ids", "input", "i64", [[3, 1, 4]])


def test_clean_passes_and_the_planted_change_is_named_in_layer_1s_down_projection(tools):
    assert compare_exit(tools / "polygraphy-clean.json", tools / "polygraphy-clean.json", "--quiet")[0] == 0
    code, text = compare_exit(tools / "polygraphy-clean.json", tools / "polygraphy-planted.json")
    first = text.split("FIRST DIVERGENCE")[1].splitlines()[1]
    assert code == 1 and first.strip().startswith("/model/layers/1/mlp/down_proj/") and "layer 1" in first


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def test_legacy_markers_and_latin1_arrays_are_read(tmp_path):
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    doc = {"lst": [["old-runner", [{"outputs": {"y": {"array": _npy(arr).decode("latin-1"),
                                                     "__polygraphy_encoded_ndarray": "polygraphy_serialized_json_type"}},
                                   "runtime": 0.1, "runner_name": "old-runner",
                                   "__polygraphy_encoded_IterationResult": "polygraphy_serialized_json_type"}]]],
           "__polygraphy_encoded_RunResults": "polygraphy_serialized_json_type"}  # fmt: skip
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    (r,) = list(open_trace(path))
    np.testing.assert_array_equal(r.tensor(), arr)


def _pickled_npy() -> bytes:
    """An .npy of Python objects: its data is a pickle, which np.load runs only with allow_pickle=True."""
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    return buf.getvalue()


@pytest.mark.parametrize(
    "output, message",
    [
        ({"tensor": "UEsDBA==", "polygraphy_class": "Tensor"}, "class 'Tensor'"),
        ({"array": base64.b64encode(_pickled_npy()).decode(), "polygraphy_class": "ndarray"}, "Python objects"),
        ({"array": "not base64 \u20ac", "polygraphy_class": "ndarray"}, "neither base64 nor latin-1"),
    ],
)
def test_a_pickled_tensor_an_object_array_and_bad_data_are_refused_and_reported(tmp_path, output, message):
    doc = {
        "lst": [["r", [{"outputs": {"y": output}, "polygraphy_class": "IterationResult"}]]],
        "polygraphy_class": "RunResults",
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    trace = open_trace(path)
    assert list(trace) == []
    assert any(message in str(d) for d in trace.diagnostics), trace.diagnostics


def test_another_top_level_class_is_refused(tmp_path):
    path = tmp_path / "acc.json"
    path.write_text(json.dumps({"lst": [], "polygraphy_class": "AccuracyResults"}))
    trace = open_trace(path)
    assert list(trace) == [] and "not RunResults" in str(trace.diagnostics[0])
