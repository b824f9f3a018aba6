"""The hunt's directory: the model and llama.cpp's trace, made once per session."""

from __future__ import annotations

import pytest

from examples.hunt.run import prepare


@pytest.fixture(scope="session")
def hunt_dir(tmp_path_factory, run_tokens_program):
    directory = tmp_path_factory.mktemp("hunt")
    prepare(directory, program=run_tokens_program)  # the model, llama.cpp's trace, the clean NumPy engine's
    return directory
