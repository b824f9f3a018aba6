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
C_FIELD = {k.name: k.setting for k in schema_gen.KNOBS}
# Knobs whose effect is what the run writes rather than its header: checked by a run that shows it.
BEHAVIOUR = ("ORCH_LOG_AGAINST_PPM", "ORCH_LOG_AGAINST_CONTEXT", "ORCH_LOG_STOP", "ORCH_LOG_ON_NONFINITE")


@pytest.fixture
def clean_env(monkeypatch):
    for knob in KNOBS:
        monkeypatch.delenv(knob, raising=False)
    return monkeypatch


def _warnings(capfd) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if line.startswith("orchlog: warning:")]


def _full_reasons(path) -> list[str | None]:
    return [json.loads(line)["full_reason"] for line in path.read_text().splitlines()[1:]]


def _check_behaviour(case: dict, tmp_path, capfd) -> None:
    """A run whose records show the knob's value: each token's tensor against a full reference where
    token 0 differs (by 5 millionths, or by half), or a NaN tensor then a finite one."""
    rng = np.random.default_rng(7)
    tensors = [rng.standard_normal(256).astype(np.float32) for _ in range(30)]
    reference = tmp_path / "reference.bin"
    orchlog.configure(path=str(reference), mode="full", against="")
    for token, x in enumerate(tensors):
        orchlog.log("x", x, token_idx=token)
    emitter.close()
    value, path = case["value"], tmp_path / "effect.jsonl"
    if case["knob"] == "ORCH_LOG_ON_NONFINITE":
        orchlog.configure(path=str(path))
        orchlog.log("x", np.array([1.0, np.nan], dtype=np.float32), token_idx=0)
        orchlog.log("x", np.array([1.0, 2.0], dtype=np.float32), token_idx=1)
        emitter.close()
        said = [w for w in _warnings(capfd) if "NaN or Inf" in w]
        assert len(said) == (0 if value == "off" else 1)
        first = "nonfinite" if value in ("full", "stop") else None
        assert _full_reasons(path) == ([first] if value == "stop" else [first, None])
        return
    ours = [x.copy() for x in tensors]
    ours[0] = ours[0] * np.float32(1 + 5e-6 if case["knob"] == "ORCH_LOG_AGAINST_PPM" else 1.5)
    orchlog.configure(path=str(path), against=str(reference))
    for token, x in enumerate(ours):
        orchlog.log("x", x, token_idx=token)
    emitter.close()
    reasons = _full_reasons(path)
    if case["knob"] == "ORCH_LOG_AGAINST_PPM":
        assert reasons[0] == ("against" if value < 5 else None)
    elif case["knob"] == "ORCH_LOG_AGAINST_CONTEXT":
        assert reasons == ["against"] + ["against_context"] * value + [None] * (29 - value)
    else:
        assert len(reasons) == (17 if value == "first_fail" else 30)


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
    if case["knob"] in BEHAVIOUR:
        _check_behaviour(case, tmp_path, capfd)
    else:
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
    if case["knob"] not in BEHAVIOUR:  # the Python emitter's test runs the records that show it
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
