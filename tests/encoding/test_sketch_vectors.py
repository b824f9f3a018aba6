"""The shared sketch vectors are what the reference builds, so every language is held to the reference."""

from __future__ import annotations

from tests.encoding import sketch_vectors


def test_the_committed_vectors_are_what_the_reference_builds():
    assert sketch_vectors.PATH.read_text() == sketch_vectors.text(), (
        "tests/encoding/sketch_vectors.json is stale: run .venv/bin/python -m tests.encoding.sketch_vectors"
    )
