"""The seed traces, made once per session."""

from __future__ import annotations

import pytest

from tests.fuzz.seeds import make_seeds


@pytest.fixture(scope="session")
def seeds(tmp_path_factory):
    return make_seeds(tmp_path_factory.mktemp("seeds"))
