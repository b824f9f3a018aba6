"""The tiny Qwen2 GGUF of the end-to-end example, made once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.qwen2_tiny.make_model import make_tiny_model


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny-qwen2.gguf")
