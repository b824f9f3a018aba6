"""`import orchlog` and `orchlog --help` start fast: heavy dependencies are imported only by what uses them."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.tracegen import record, write_jsonl

HEAVY = ("numpy", "pyarrow", "pandas", "torch", "orchlog.emit.parquet_run", "orchlog.parquet.writer", "orchlog._native")


def _loaded_after(code: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_importing_orchlog_and_building_the_command_line_imports_nothing_heavy():
    assert _loaded_after("import orchlog, orchlog.cli\norchlog.cli.build_parser()") == []


def test_orchlog_names_still_resolve_on_first_use():
    assert "orchlog._native" in _loaded_after("import orchlog\nassert callable(orchlog.log) and orchlog.__version__")


def test_comparing_jsonl_traces_imports_neither_pyarrow_nor_the_emitters(tmp_path):
    import numpy as np

    a = write_jsonl(tmp_path / "a.jsonl", [record("x", np.ones(4, np.float32))])
    b = write_jsonl(tmp_path / "b.jsonl", [record("x", np.ones(4, np.float32))])
    loaded = _loaded_after(f"from orchlog.cli import main\nassert main(['compare', {str(a)!r}, {str(b)!r}, '-q']) == 0")
    assert "numpy" in loaded
    assert not {"pyarrow", "pandas", "torch", "orchlog.emit.parquet_run", "orchlog.parquet.writer"} & set(loaded)


def test_the_parquet_functions_stay_functions_whatever_was_imported_before():
    # A submodule named like the function it holds would replace it on the package once imported.
    code = (
        "import orchlog.parquet.packing, orchlog.parquet.reading, orchlog.parquet.writer\n"
        "from orchlog.parquet import Writer, open_writer, pack, read\n"
        "assert all(callable(f) and not isinstance(f, type(orchlog)) for f in (Writer, open_writer, pack, read))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
