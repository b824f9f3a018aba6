"""orchlog.torch tests import torch (several seconds): the slow tier."""

from __future__ import annotations

import pytest

import orchlog

pytest.importorskip("torch")


@pytest.fixture
def trace(tmp_path):
    """A full-mode orchlog run for the test; yields its path, closed afterwards."""
    path = tmp_path / "torch.bin"
    orchlog.configure(path=str(path), mode="full", team="torch", select="")
    yield path
    orchlog.close()
