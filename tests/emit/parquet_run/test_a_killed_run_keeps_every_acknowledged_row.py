"""kill -9 or a full disk in the middle of a Parquet run: every row orchlog.flush() acknowledged reads back.

Rows are gathered into row groups; `flush` writes the ones gathered so far as
a row group, whole, and returns True once it is written. A process killed
after that, or a disk that fills after that, leaves those rows readable:
the file has no footer then, and orchlog's reader finds its row groups.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import blake3

from orchlog.parquet import read
from tests.conftest import ROOT
from tests.tracegen import raw_of, tensor_of

_ENGINE = """
    import resource, signal, sys
    import numpy as np, orchlog
    limit = {limit}
    if limit:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    orchlog.configure(format="parquet", path={path!r}, team="killed")
    i = 0
    while True:
        orchlog.log("h", np.full(4096, i, np.float32), token_idx=i)
        i += 1
        if i % 4 == 0:
            ok = orchlog.flush()
            print("acked" if ok else "refused", i, flush=True)
            if not ok:
                break
"""


def _engine(path, limit: int = 0) -> subprocess.Popen:
    code = textwrap.dedent(_ENGINE).format(path=str(path), limit=limit)
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def _rows(path) -> list:
    trace = read(path)
    recs = list(trace)
    for i, rec in enumerate(recs):
        assert rec.token_idx == rec.seq == i
        assert blake3.blake3(raw_of(rec)).hexdigest() == rec.blake3
        assert tensor_of(rec)[0] == i
    return recs


def test_kill_9_after_a_flush_leaves_every_acknowledged_row(tmp_path):
    path = tmp_path / "t.parquet"
    proc = _engine(path)
    acked = 0
    assert proc.stdout is not None and proc.stderr is not None
    for line in proc.stdout:
        acked = int(line.split()[1])
        if acked >= 24:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert len(_rows(path)) >= acked


def test_a_disk_that_fills_keeps_every_acknowledged_row_and_warns_once_at_the_failure(tmp_path):
    path = tmp_path / "t.parquet"
    proc = _engine(path, limit=256 << 10)
    out, err = proc.communicate(timeout=120)
    acked = max(int(line.split()[1]) for line in out.splitlines() if line.startswith("acked"))
    assert out.splitlines()[-1].startswith("refused") and proc.returncode == 0
    [warning] = err.splitlines()
    assert warning.startswith("orchlog: warning: writing ") and "logging is off from now on" in warning
    assert len(_rows(path)) >= acked > 0
