"""Fixtures of the end-to-end example: the tiny model file, and each engine's
logits for the default scenario (computed once per session).

Fixtures that import torch or build llama.cpp are used by `slow` tests only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from examples.numpy_engine.run import run_numpy_engine
from examples.qwen2_tiny.config import TINY
from examples.qwen2_tiny.make_model import make_tiny_model
from examples.qwen2_tiny.scenario import DEFAULT_SCENARIO

# Engines that compute the same model in float32 must agree this closely on
# every logit; docs/llama-cpp.md records the measured differences.
AGREEMENT_ATOL = 1e-5


def assert_logits_of_every_position(logits: np.ndarray) -> None:
    """What every engine's run returns for the default scenario."""
    assert logits.shape == (DEFAULT_SCENARIO.n_positions, TINY.n_vocab)
    assert logits.dtype == np.float32
    assert np.isfinite(logits).all()


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny-qwen2.gguf")


@pytest.fixture(scope="session")
def numpy_logits(tiny_gguf) -> np.ndarray:
    return run_numpy_engine(tiny_gguf)


@pytest.fixture(scope="session")
def hf_logits(tiny_gguf) -> np.ndarray:
    from examples.qwen2_tiny.run_hf import run_hf

    return run_hf(tiny_gguf)


@pytest.fixture(scope="session")
def llama_programs() -> Path:
    """The directory of the example programs built against llama.cpp (built on first use, cached)."""
    from examples.llama_cpp.run import build_programs

    return build_programs(quiet=True)


@pytest.fixture(scope="session")
def run_tokens_program(llama_programs) -> Path:
    return llama_programs / "run_tokens"


@pytest.fixture(scope="session")
def llama_logits(tiny_gguf, run_tokens_program) -> np.ndarray:
    from examples.llama_cpp.run import run_llama_cpp

    return run_llama_cpp(tiny_gguf, program=run_tokens_program)
