"""What a compare's start-up leaves unimported: the modules only other paths need, each milliseconds to import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import orchlog

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def _small_pair(tmp_path: Path) -> tuple[str, str]:
    paths = []
    for name, shift in (("a", 0.0), ("b", 0.5)):
        path = tmp_path / f"{name}.jsonl"
        orchlog.configure(path=str(path), team=name)
        for token in range(3):
            orchlog.log("hidden", np.full(8, token + shift, dtype=np.float32), token_idx=token, layer=0)
        orchlog.close()
        paths.append(str(path))
    return paths[0], paths[1]


def test_a_text_compare_imports_no_shutil_html_nor_thread_pool(tmp_path):
    a, b = _small_pair(tmp_path)
    code = (
        "import sys\nfrom orchlog.cli import main\n"
        f"code = main(['compare', {a!r}, {b!r}, '-q'])\n"
        "late = [m for m in ('shutil', 'html', 'concurrent.futures') if m in sys.modules]\n"
        "assert code == 1 and not late, (code, late)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr


def test_help_is_wrapped_to_the_width_columns_says():
    widths = {}
    for columns in (60, 120):
        proc = subprocess.run(
            [sys.executable, "-m", "orchlog", "compare", "--help"],
            capture_output=True,
            text=True,
            env=_env(COLUMNS=str(columns)),
        )
        options = proc.stdout.split("options:", 1)[1].split("\n\n", 1)[0].splitlines()
        widths[columns] = max(len(line) for line in options)
    assert widths[60] <= 60 < widths[120] <= 120
