"""Build the Rust crate's example programs once per test session."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

CRATE = ROOT / "native" / "rust"


def cargo() -> str | None:
    home_cargo = Path.home() / ".cargo" / "bin" / "cargo"
    return shutil.which("cargo") or (str(home_cargo) if home_cargo.exists() else None)


def cargo_path() -> str:
    """cargo, for code that runs only where cargo() found it (each caller is skipped without it)."""
    path = cargo()
    assert path is not None, "cargo not found; scripts/bootstrap.sh installs it"
    return path


def env() -> dict[str, str]:
    """The environment cargo runs in: the suite's shared, cached target dir."""
    return dict(
        os.environ,
        CARGO_TARGET_DIR=os.environ.get("CARGO_TARGET_DIR", str(ROOT / ".cache" / "cargo-target")),
        CARGO_BUILD_JOBS=os.environ.get("CARGO_BUILD_JOBS", "2"),
    )


# The crate's `harness` profile: the debug build's overflow checks and assertions, optimized. The fuzz and
# hostile-reference campaigns feed these programs gigabytes, which the unoptimized build took minutes over
# (the test of a reference claiming 3 GB: 152 s with the debug build, 20 s with this one; the build 26 s, once).
PROFILE = "harness"


@functools.cache
def _build_examples() -> Path:
    subprocess.run(
        [cargo_path(), "build", "--quiet", "--locked", "--examples", "--all-features", "--profile", PROFILE],
        cwd=CRATE,
        env=env(),
        check=True,
    )
    return Path(env()["CARGO_TARGET_DIR"]) / PROFILE / "examples"


def rust_example(name: str) -> Path:
    """Path of a built example of native/rust (skips the test when cargo is missing)."""
    if cargo() is None:
        pytest.skip("cargo not found; scripts/bootstrap.sh installs it")
    return _build_examples() / name
