"""A Parquet run never raises into the host: bad calls are skipped and counted, failed writes turn it off."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import orchlog
from orchlog.emit import api as emitter
from tests.conftest import ROOT


def _warnings(capfd) -> list[str]:
    return capfd.readouterr().err.splitlines()


@pytest.fixture(autouse=True)
def _closed():
    yield
    emitter.close()


@pytest.mark.parametrize("path", ["/nonexistent-dir/t.parquet", "/dev/full"])
def test_a_path_that_cannot_be_opened_gives_one_warning_and_logging_stays_off(path, capfd):
    before = emitter.stats().errors
    capfd.readouterr()
    assert orchlog.configure(format="parquet", path=path) is False
    assert orchlog.log("h", np.zeros(4, np.float32)) is False
    [warning] = _warnings(capfd)
    assert warning.startswith("orchlog: warning: cannot open ") and warning.endswith("logging is off")
    assert emitter.stats().errors == before + 1 and not emitter.stats().enabled


def test_bad_calls_are_skipped_counted_each_and_reported_once(tmp_path, capfd):
    assert orchlog.configure(format="parquet", path=str(tmp_path / "t.parquet"))
    before = emitter.stats().errors
    capfd.readouterr()
    assert orchlog.log("a", object()) is False
    assert orchlog.log(42, np.zeros(2)) is False  # type: ignore[arg-type]  # wrong on purpose
    assert orchlog.log("b", np.zeros(2), layer="3") is False  # type: ignore[arg-type]  # wrong on purpose
    assert orchlog.log("c", np.zeros(2), meta={"x": [1]}) is False  # type: ignore[dict-item]  # wrong on purpose
    assert orchlog.log("d", np.zeros(2, np.complex64)) is False
    assert orchlog.log("fine", np.zeros(2, np.float32)) is True
    [warning] = _warnings(capfd)
    assert warning.startswith("orchlog: warning: orchlog.log: ")
    assert emitter.stats().errors == before + 5 and emitter.stats().records == 1


def test_an_invalid_selector_in_the_environment_turns_logging_off_with_one_warning(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("ORCH_LOG_SELECT", "layer=\u0663")
    capfd.readouterr()
    assert orchlog.configure(format="parquet", path=str(tmp_path / "t.parquet")) is False
    [warning] = _warnings(capfd)
    assert "is invalid" in warning and not (tmp_path / "t.parquet").exists()


def test_a_write_that_fails_mid_run_gives_one_warning_and_the_host_exits_0(tmp_path):
    # The file may grow to 12 MiB only (RLIMIT_FSIZE, as a full disk would stop it): the third
    # row group of random tensors fails, in the writer's thread, and the host must not notice.
    code = f"""
        import resource, signal
        import numpy as np, orchlog
        from orchlog.emit import api as emitter
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (12 << 20, 12 << 20))
        assert orchlog.configure(format="parquet", path={str(tmp_path / "t.parquet")!r})
        rng = np.random.default_rng(0)
        written = [orchlog.log("h", rng.standard_normal(1 << 20).astype(np.float32), token_idx=i) for i in range(24)]
        s = emitter.stats()
        print(sum(written), s.enabled, s.errors)
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    [warning] = done.stderr.splitlines()
    assert warning.startswith("orchlog: warning: writing ") and "logging is off from now on" in warning
    written, enabled, errors = done.stdout.split()
    assert 4 <= int(written) < 24 and enabled == "False" and errors == "1"
