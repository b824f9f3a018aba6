"""orchlog.log while logging is off: it answers from the C++ logger's state byte, read in place (and,
once it has seen it off, from a flag that repeats it), and falls through to the extension whenever the
state is anything but off (not yet configured from the env, on, forked), so that nothing that should be
written is missed."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import orchlog
from orchlog.emit import api as emitter


@pytest.fixture
def off():
    orchlog.configure(path="")
    yield
    emitter.close()


def test_the_state_byte_says_off_once_a_run_without_a_file_is_configured(off):
    assert emitter._STATE[0] == emitter._STATE_OFF
    assert orchlog.log("x", np.ones(4, dtype=np.float32), 0) is False
    assert (orchlog.stats().enabled, orchlog.stats().records) == (False, 0)


def test_a_run_configured_after_an_off_period_is_written(off, tmp_path):
    assert orchlog.log("before", np.ones(4, dtype=np.float32), 0) is False
    path = tmp_path / "t.jsonl"
    assert orchlog.configure(path=str(path), select="", mode="summary")
    assert emitter._STATE[0] != emitter._STATE_OFF
    assert orchlog.log("after", np.ones(4, dtype=np.float32), 1) is True
    emitter.close()
    assert [r.checkpoint for r in orchlog.open_trace(path)] == ["after"]


def test_an_unknown_keyword_is_a_type_error_even_while_off(off):
    with pytest.raises(TypeError, match="unexpected keyword argument nonsense"):
        orchlog.log("x", np.ones(4, dtype=np.float32), nonsense=1)  # type: ignore[call-arg]  # wrong on purpose


def test_the_first_call_of_a_process_configures_from_the_env_and_writes(tmp_path):
    path = tmp_path / "env.jsonl"
    script = "import numpy as np, orchlog; print(orchlog.log('first', np.ones(3, dtype=np.float32), 0))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_LOG_")}
    env["ORCH_LOG_FILE"] = str(path)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    assert [r.checkpoint for r in orchlog.open_trace(path)] == ["first"]


def test_a_parquet_run_is_fed_while_the_native_logger_is_off(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.parquet"
    assert orchlog.configure(path=str(path), format="parquet", select="")
    try:
        assert emitter._STATE[0] == emitter._STATE_OFF  # the C++ logger writes nothing in a Parquet run
        assert orchlog.log("p", np.ones(4, dtype=np.float32), 0) is True
    finally:
        emitter.close()
    assert [r.checkpoint for r in orchlog.open_trace(path)] == ["p"]


class _Unread:
    """A state byte that must not be looked at."""

    def __getitem__(self, i: int) -> int:
        raise AssertionError("log() read the state byte while it was known to be off")


def test_once_logging_is_seen_off_log_answers_without_reading_the_state_byte(off, monkeypatch):
    monkeypatch.setattr(emitter, "_STATE", _Unread())
    for token in range(3):
        assert orchlog.log("x", np.ones(4, dtype=np.float32), token) is False


def test_a_stop_inside_the_extension_is_seen_and_later_calls_stay_out_of_it(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    assert orchlog.configure(path=str(path), select="", mode="summary", on_nonfinite="stop")
    try:
        assert orchlog.log("fine", np.ones(4, dtype=np.float32), 0) is True
        assert orchlog.log("nan", np.array([np.nan, 1.0], dtype=np.float32), 1) is True  # written, then stopped
        assert orchlog.log("after", np.ones(4, dtype=np.float32), 2) is False  # the state byte says off ...
        assert emitter._seen_off  # ... and log() noted it
        monkeypatch.setattr("orchlog._native.log", _never_called)
        assert orchlog.log("later", np.ones(4, dtype=np.float32), 3) is False
    finally:
        monkeypatch.undo()
        emitter.close()
    assert [r.checkpoint for r in orchlog.open_trace(path)] == ["fine", "nan"]


def _never_called(*args: object) -> bool:
    raise AssertionError("log() called into the extension while logging was known to be off")


class _TurnedOn:
    """A state byte that reads off, then on: configure() turning logging on in another thread between the
    flag's read and its write."""

    def __init__(self) -> None:
        self.reads = 0

    def __getitem__(self, i: int) -> int:
        self.reads += 1
        return emitter._STATE_OFF if self.reads == 1 else emitter._STATE_OFF + 1


def test_a_run_started_between_the_read_and_the_write_of_the_flag_is_not_missed(monkeypatch):
    monkeypatch.setattr(emitter, "_STATE", _TurnedOn())
    monkeypatch.setattr(emitter, "_seen_off", False)
    assert emitter._note_state() is False
    assert emitter._seen_off is False
