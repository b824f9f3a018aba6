"""`orchlog pack`: exit codes, problems on stderr with positions, quiet when asked or piped."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq

from orchlog.parquet import read
from tests.tracegen import record, write_frames


def _orchlog(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchlog", *args], capture_output=True, text=True)


def _stream(tmp_path, name="t.bin", n=3):
    return write_frames(tmp_path / name, [record(f"c{i}", np.full(16, i, np.float32), seq=i) for i in range(n)])


def test_a_clean_pack_exits_0_and_says_what_it_wrote(tmp_path):
    proc = _orchlog("pack", str(_stream(tmp_path)), "-o", str(tmp_path / "out.parquet"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("packed 3 records (3 with tensors") and proc.stderr == ""
    assert len(list(read(tmp_path / "out.parquet"))) == 3


def test_problems_go_to_stderr_with_positions_and_exit_1(tmp_path):
    stream = _stream(tmp_path)
    stream.write_bytes(stream.read_bytes()[:-5])
    proc = _orchlog("pack", "--quiet", str(stream), "-o", str(tmp_path / "out.parquet"))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"orchlog pack: {stream}@") and "truncated frame" in proc.stderr
    assert len(list(read(tmp_path / "out.parquet"))) == 2


def test_strict_turns_a_problem_into_a_one_line_error_and_exit_2(tmp_path):
    stream = _stream(tmp_path)
    stream.write_bytes(stream.read_bytes()[:-5])
    proc = _orchlog("pack", "--strict", str(stream), "-o", str(tmp_path / "out.parquet"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("orchlog: error:") and "--strict" in proc.stderr
    assert not (tmp_path / "out.parquet").exists()


def test_options_reach_the_writer(tmp_path):
    proc = _orchlog(
        "pack",
        str(_stream(tmp_path, n=8)),
        "-o",
        str(tmp_path / "out.parquet"),
        "--codec",
        "none",
        "--row-group-mb",
        "0.0001",
    )
    assert proc.returncode == 0, proc.stderr
    meta = pq.ParquetFile(tmp_path / "out.parquet").metadata
    assert meta.num_row_groups == 8 and meta.row_group(0).column(0).compression == "UNCOMPRESSED"


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    proc = _orchlog("pack", str(tmp_path / "missing.bin"), "-o", str(tmp_path / "out.parquet"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "does not exist" in proc.stderr
    proc = _orchlog("pack", str(_stream(tmp_path)), "-o", str(tmp_path / "out.parquet"), "--row-group-mb", "0")
    assert proc.returncode == 2 and "must be positive" in proc.stderr
