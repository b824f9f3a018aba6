"""ORCH_LOG_ON_NONFINITE through the Python emitter (the C++ core): the first tensor holding NaN or Inf is said
once, written whole when asked, and stops the records when asked; the host is never stopped."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import orchlog
from orchlog.read.paths import open_trace

RUN: dict[str, Any] = {"team": "t", "select": "", "model": "", "git_commit": ""}


def _run(path, on_nonfinite: str) -> list:
    assert orchlog.configure(path=str(path), on_nonfinite=on_nonfinite, **RUN)
    x = np.arange(40, dtype=np.float32)
    for layer in range(4):
        y = x.copy()
        if layer >= 2:  # NaN from layer 2 on, Inf at layer 3
            y[7] = np.nan if layer == 2 else np.inf
        orchlog.log("l_out", y, 0, layer)  # returns normally whatever happens: the host runs on
    orchlog.close()
    return list(open_trace(path))


@pytest.mark.parametrize(
    "on_nonfinite, written, whole",
    [("off", 4, None), ("warn", 4, None), ("full", 4, "nonfinite"), ("stop", 3, "nonfinite")],
)
def test_the_first_nonfinite_tensor_is_said_once_and_written_as_asked(tmp_path, capfd, on_nonfinite, written, whole):
    capfd.readouterr()
    records = _run(tmp_path / "run.jsonl", on_nonfinite)
    assert len(records) == written
    assert [r.full_reason for r in records] == [None, None, whole, None][:written]
    said = [line for line in capfd.readouterr().err.splitlines() if "NaN or Inf" in line]
    if on_nonfinite == "off":
        assert said == []
    else:
        assert said == [
            "orchlog: warning: the first tensor holding NaN or Inf: 'l_out' token_idx=0 layer=2 rank=0 num_shards=1 "
            "(1 NaN, 0 Inf; ORCH_LOG_ON_NONFINITE)"
        ]
    if whole:
        values = records[2].values
        assert len(values) == 40 and np.isnan(values[7]) and values[8] == 8.0


def test_a_second_run_of_the_process_says_its_own_first_nonfinite_tensor(tmp_path, capfd):
    capfd.readouterr()
    _run(tmp_path / "one.jsonl", "warn")
    _run(tmp_path / "two.jsonl", "warn")
    assert len([line for line in capfd.readouterr().err.splitlines() if "NaN or Inf" in line]) == 2
