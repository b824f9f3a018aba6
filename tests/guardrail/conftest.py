"""An empty artifact tree per test, written with the example generator (examples/guardrail/artifacts.py)."""

from __future__ import annotations

import pytest

from examples.guardrail.artifacts import Tree


@pytest.fixture
def tree(tmp_path) -> Tree:
    return Tree(tmp_path / "artifacts")
