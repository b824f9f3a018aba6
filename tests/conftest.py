"""Shared fixtures: the checkout root and the conformance vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "schema" / "vectors"


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
