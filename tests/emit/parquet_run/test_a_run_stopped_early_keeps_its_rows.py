"""A Parquet run of orchlog.log that stops early still leaves a valid file with every row logged before.

The engine never calls close: an exception or a Ctrl-C ends the program, and
the file gets its footer when Python exits (completed row groups were written
already; the rows still being gathered are written then).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import blake3
import pytest

from orchlog.parquet import read
from tests.conftest import ROOT
from tests.tracegen import raw_of

_ENGINE = """
    import signal
    import numpy as np, orchlog
    # A Ctrl-C raises here even when whatever started the tests ignores SIGINT (a job started with & from a
    # script does), which the engine would otherwise inherit.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    orchlog.configure(format="parquet", path={path!r}, team="stopped")
    i = 0
    while True:
        orchlog.log("h", np.full(1 << 20, i, np.float32), token_idx=i)  # 4 MiB: a row group every 4 rows
        i += 1
        if i == {rows}:
            {stop}
"""


def _engine(path, rows: int, stop: str) -> subprocess.Popen:
    code = textwrap.dedent(_ENGINE).format(path=str(path), rows=rows, stop=stop)
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def _intact_rows(path) -> int:
    trace = read(path)
    recs = list(trace)
    for i, rec in enumerate(recs):
        assert rec.seq == i == rec.token_idx and blake3.blake3(raw_of(rec)).hexdigest() == rec.blake3
    assert trace.headers[0]["team"] == "stopped"
    return len(recs)


@pytest.mark.parametrize(
    "stop, error",
    [("raise RuntimeError('engine failed')", "RuntimeError"), ("raise KeyboardInterrupt", "KeyboardInterrupt")],
)
def test_an_exception_that_ends_the_engine_leaves_every_logged_row(stop, error, tmp_path):
    proc = _engine(tmp_path / "t.parquet", 10, stop)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and error in err and "orchlog: warning" not in err
    assert _intact_rows(tmp_path / "t.parquet") == 10


def test_ctrl_c_in_the_middle_of_logging_leaves_every_logged_row(tmp_path):
    proc = _engine(tmp_path / "t.parquet", 9, "print('ready', flush=True)")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert _intact_rows(tmp_path / "t.parquet") >= 9
