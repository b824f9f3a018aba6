"""env.json and selector.json through the Python emitter and the C ABI.

Each knob value parses to what the vector says, with a warning exactly when
it says so; each selector writes exactly the records it matches, and each
invalid one turns logging off. (The C++ tests check the same vectors against
the parsers directly; these check that the two bindings reach them.)
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import orchlog
from orchlog import schema_gen
from orchlog.emit import api as emitter
from orchlog.errors import OrchlogError
from tests.conftest import load_vectors

ENV = load_vectors("env.json")
SELECTOR = load_vectors("selector.json")
KNOBS = [k.name for k in schema_gen.KNOBS]
IN_HEADER = {"ORCH_LOG_VALUES": "values", "ORCH_LOG_RANK": "rank", "ORCH_LOG_WORLD_SIZE": "world_size"}
C_FIELD = {
    "ORCH_LOG_VALUES": "values",
    "ORCH_LOG_MODE": "mode",
    "ORCH_LOG_RANK": "rank",
    "ORCH_LOG_WORLD_SIZE": "world_size",
}


@pytest.fixture
def clean_env(monkeypatch):
    for knob in KNOBS:
        monkeypatch.delenv(knob, raising=False)
    return monkeypatch


def _warnings(capfd) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if line.startswith("orchlog: warning:")]


def _check_knob_effect(case: dict, path) -> None:
    """The knob's value, as the file shows it: the header field, or the encoding for the mode."""
    first = path.read_bytes()[:1]
    if case["knob"] == "ORCH_LOG_MODE":
        assert first == (
            b"{" if case["value"] != "full" else b"\x8c"
        )  # the header map: 11 fields and the frame checksum
        assert path.with_name(path.name + ".bin").exists() == (case["value"] == "both")
        return
    header = json.loads(path.read_text().splitlines()[0])
    assert header[IN_HEADER[case["knob"]]] == case["value"]


@pytest.mark.parametrize("case", ENV["knobs"], ids=lambda c: f"{c['knob']}={c['raw']!r}")
def test_the_python_emitter_reads_every_knob_vector(case, clean_env, tmp_path, capfd):
    if case["raw"] is not None:
        clean_env.setenv(case["knob"], case["raw"])
    path = tmp_path / "trace"
    capfd.readouterr()
    assert orchlog.configure(path=str(path))
    emitter.close()
    assert len(_warnings(capfd)) == (1 if case["warning"] else 0)
    _check_knob_effect(case, path)


@pytest.mark.parametrize("case", ENV["knobs"], ids=lambda c: f"{c['knob']}={c['raw']!r}")
def test_the_c_abi_parses_every_knob_vector_given_as_an_option(case, c_abi, clean_env, tmp_path, capfd):
    ffi, lib = c_abi
    path = tmp_path / "trace"
    keep = [ffi.new("char[]", str(path).encode())]
    options = ffi.new("orchlog_options*")
    options.path = keep[0]
    if case["raw"] is not None:
        keep.append(ffi.new("char[]", case["raw"].encode()))
        setattr(options, C_FIELD[case["knob"]], keep[-1])
    capfd.readouterr()
    assert lib.orchlog_configure(options) == 1
    lib.orchlog_close()
    assert len(_warnings(capfd)) == (1 if case["warning"] else 0)
    _check_knob_effect(case, path)


def _written(log_one, configure, selector: str) -> list[bool]:
    """Which of the vector's keys a run with this selector writes (each under its own rank)."""
    out = []
    for key in SELECTOR["keys"]:
        assert configure(selector, key["rank"])
        out.append(bool(log_one(key)))
    return out


@pytest.mark.parametrize("case", SELECTOR["valid"], ids=lambda c: repr(c["selector"]))
def test_the_python_emitter_writes_exactly_what_each_selector_matches(case, clean_env, tmp_path):
    def configure(selector, rank):
        return orchlog.configure(path=str(tmp_path / "t.jsonl"), select=selector, rank=rank)

    def log_one(key):
        return orchlog.log(
            key["checkpoint"],
            np.zeros(2, dtype=np.float32),
            token_idx=key["token_idx"],
            layer=key["layer"],
            stage=key["stage"],
            step=key["step"],
        )

    assert _written(log_one, configure, case["selector"]) == case["matches"]
    emitter.close()


@pytest.mark.parametrize("case", SELECTOR["valid"], ids=lambda c: repr(c["selector"]))
def test_the_c_abi_writes_exactly_what_each_selector_matches(case, c_abi, clean_env, tmp_path):
    ffi, lib = c_abi
    keep = []

    def text(s):
        keep.append(ffi.new("char[]", s.encode()))
        return keep[-1]

    def configure(selector, rank):
        options = ffi.new(
            "orchlog_options*",
            {"path": text(str(tmp_path / "t.jsonl")), "select": text(selector), "rank": text(str(rank))},
        )
        return lib.orchlog_configure(options) == 1

    def log_one(key):
        none = -1
        k = ffi.new(
            "orchlog_key*",
            {
                "token_idx": none if key["token_idx"] is None else key["token_idx"],
                "layer": none if key["layer"] is None else key["layer"],
                "step": none if key["step"] is None else key["step"],
                "stage": ffi.NULL if key["stage"] is None else text(key["stage"]),
            },
        )
        shape = ffi.new("int64_t[]", [2])
        return lib.orchlog_log(text(key["checkpoint"]), ffi.new("float[]", 2), b"f32", shape, 1, k)

    assert _written(log_one, configure, case["selector"]) == case["matches"]
    lib.orchlog_close()


@pytest.mark.parametrize("selector", SELECTOR["invalid"])
def test_an_invalid_selector_is_refused_by_both_bindings(selector, c_abi, clean_env, tmp_path, capfd):
    with pytest.raises(OrchlogError):  # given to configure: a clear error at once
        orchlog.configure(path=str(tmp_path / "t.jsonl"), select=selector)
    clean_env.setenv("ORCH_LOG_SELECT", selector)  # from the knob: logging off, one warning
    capfd.readouterr()
    assert orchlog.configure(path=str(tmp_path / "t.jsonl")) is False
    ffi, lib = c_abi
    path, text = ffi.new("char[]", str(tmp_path / "c.jsonl").encode()), ffi.new("char[]", selector.encode())
    assert lib.orchlog_configure(ffi.new("orchlog_options*", {"path": path, "select": text})) == 0
    warnings = _warnings(capfd)
    assert len(warnings) == 2 and all("is invalid" in w for w in warnings)
