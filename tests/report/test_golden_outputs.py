"""Every report format of every command, byte for byte as the golden files hold it (tests/report/golden.py
says how they are made and updated): moving or rewriting a renderer must not change what users read."""

from __future__ import annotations

import difflib

import pytest

from tests.report.golden import GOLDEN, outputs


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    return outputs(tmp_path_factory.mktemp("golden"))


def test_every_golden_file_is_still_produced(produced):
    assert sorted(produced) == sorted(p.name for p in GOLDEN.iterdir())


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.iterdir()) if GOLDEN.is_dir() else [])
def test_the_output_is_byte_for_byte_the_golden_file(produced, name):
    want, got = (GOLDEN / name).read_bytes(), produced.get(name, b"")
    if got != want:
        diff = difflib.unified_diff(
            want.decode(errors="replace").splitlines(), got.decode(errors="replace").splitlines(), lineterm="", n=1
        )
        pytest.fail(
            f"{name} differs (if meant: .venv/bin/python -m tests.report.golden --update):\n"
            + "\n".join(list(diff)[:40])
        )
