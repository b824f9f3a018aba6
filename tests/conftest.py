"""Shared fixtures: the checkout root and the conformance vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "schema" / "vectors"


# Tests that share an expensive session fixture or a machine-wide resource run in one worker of a parallel
# run (pytest -n N --dist loadgroup): the hunt's llama.cpp traces, the quantized hunt's models, the Ray
# clusters (one local cluster at a time), the real tools' dumps.
GROUPS = {
    "tests/examples/hunt/": "hunt",
    "tests/examples/quantized/": "quantized",
    "tests/examples/tool_dumps/": "tools",
    "tests/scale/": "ray",
    "tests/guardrail/test_parallel_pairs.py": "ray",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        where = Path(str(item.fspath)).resolve().relative_to(ROOT).as_posix()
        group = next((g for prefix, g in GROUPS.items() if where.startswith(prefix)), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def load_vectors(name: str) -> dict:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def record_vectors() -> list[dict]:
    return load_vectors("records.json")["cases"]


@pytest.fixture(scope="session")
def header_vectors() -> list[dict]:
    return load_vectors("headers.json")["cases"]


@pytest.fixture(scope="session")
def model_pair(tmp_path_factory):
    """The tiny Qwen2 as a GGUF with its byte-level vocabulary and its HF directory (examples/qwen2_tiny/
    model_pair.py; writing the HF directory imports torch: for slow tests)."""
    from examples.qwen2_tiny.model_pair import make_model_pair

    return make_model_pair(tmp_path_factory.mktemp("pair"))


@pytest.fixture(scope="session")
def planted_pair(tmp_path_factory):
    """The same pair with one weight of blk.1.ffn_up changed in the HF copy only."""
    from examples.qwen2_tiny.model_pair import make_model_pair

    return make_model_pair(tmp_path_factory.mktemp("planted"), plant="blk.1.ffn_up.weight")
