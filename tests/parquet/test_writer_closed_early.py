"""A run that stops early (exception, Ctrl-C, exit without close) still leaves a valid file with its rows."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import blake3
import numpy as np
import pytest

from orchlog.parquet import Writer, read
from tests.tracegen import raw_of


def _logged_tensors_are_intact(path) -> int:
    recs = list(read(path))
    for i, rec in enumerate(recs):
        assert rec.seq == i and blake3.blake3(raw_of(rec)).hexdigest() == rec.blake3
    return len(recs)


@pytest.mark.parametrize("stop", [RuntimeError("engine failed"), KeyboardInterrupt()])
def test_rows_logged_before_an_exception_or_interrupt_are_all_in_the_file(tmp_path, stop):
    path = tmp_path / "t.parquet"
    with pytest.raises(type(stop)):
        with Writer(path, row_group_bytes=8 * 1024) as w:
            for i in range(25):
                w.log("h", np.full(512, i, np.float32), token_idx=i)  # 2 KiB: several row groups
            raise stop
    assert _logged_tensors_are_intact(path) == 25


def _python(code: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    )


def test_ctrl_c_in_a_running_process_keeps_every_completed_row(tmp_path):
    path = tmp_path / "t.parquet"
    proc = _python(f"""
        import signal
        import numpy as np
        from orchlog.parquet import Writer
        # A Ctrl-C raises here even when whatever started the tests ignores SIGINT (a job started with & from a
        # script does), which this process would otherwise inherit.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with Writer({str(path)!r}, row_group_bytes=64 * 1024) as w:
            i = 0
            while True:
                w.log("h", np.full(4096, i, np.float32), token_idx=i)
                i += 1
                if i == 50:
                    print("ready", flush=True)
    """)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert _logged_tensors_are_intact(path) >= 50


def test_a_writer_from_open_writer_is_closed_when_python_exits(tmp_path):
    path = tmp_path / "t.parquet"
    proc = _python(f"""
        import numpy as np
        from orchlog.parquet import open_writer
        w = open_writer({str(path)!r}, team="never-closed")
        for i in range(3):
            w.log("h", np.arange(8, dtype=np.float32) + i)
    """)
    proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert _logged_tensors_are_intact(path) == 3
    assert read(path).headers[0]["team"] == "never-closed"


def test_a_writer_from_open_writer_that_wrote_row_groups_is_closed_when_python_exits(tmp_path):
    # Its writer thread has started: closing at exit must still find it running.
    path = tmp_path / "t.parquet"
    proc = _python(f"""
        import numpy as np
        from orchlog.parquet import open_writer
        w = open_writer({str(path)!r}, row_group_bytes=4096)
        for i in range(21):  # row groups of two rows, and one row still gathered at exit
            w.log("h", np.full(512, i, np.float32), token_idx=i)
        raise SystemExit(3)
    """)
    proc.communicate(timeout=60)
    assert proc.returncode == 3
    assert _logged_tensors_are_intact(path) == 21


def test_a_ctrl_c_just_after_a_lock_is_taken_never_keeps_close_from_finishing(tmp_path):
    """A Ctrl-C raised right after Python code in `threading` takes a lock (a trace function raises it
    there, at every such moment of 64 log calls that write row groups) leaves that lock held: a
    threading.Event between the caller and the writer's thread lost its lock that way, and the close
    at exit then waited on it forever (seen once in CI, a test process hanging after Ctrl-C). The
    file must close, valid, with the rows of every log call that returned."""
    path = tmp_path / "t.parquet"
    proc = _python(f"""
        import sys, threading
        import numpy as np
        from orchlog.parquet import Writer
        w = Writer({str(path)!r}, row_group_bytes=8 * 1024)
        def interrupt_after_enter(frame, event, arg):
            if frame.f_code.co_name == "__enter__" and frame.f_code.co_filename == threading.__file__:
                def at_return(frame, event, arg):
                    if event == "return":
                        raise KeyboardInterrupt
                    return at_return
                return at_return
            return None
        logged = 0
        for i in range(64):
            sys.settrace(interrupt_after_enter)
            try:
                w.log("h", np.full(512, i, np.float32), token_idx=i)
                logged += 1
            except KeyboardInterrupt:
                pass
            finally:
                sys.settrace(None)
        w.close()
        print(logged, flush=True)
    """)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert _logged_tensors_are_intact(path) >= int(out) > 0
