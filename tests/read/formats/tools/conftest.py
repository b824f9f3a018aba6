"""The other tools' dumps the readers' tests read (tests/read/data/tools, made by make_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "data" / "tools"


@pytest.fixture(scope="session")
def tools() -> Path:
    return TOOLS


def compare_exit(a: Path, b: Path, *extra: str) -> tuple[int, str]:
    """`orchlog compare a b` as a user runs it: its exit status and what it printed."""
    import contextlib
    import io

    from orchlog.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["compare", str(a), str(b), *extra])
    return code, out.getvalue()
