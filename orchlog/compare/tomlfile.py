"""The TOML files compare reads (name maps, tolerances): given by path, or shipped in a package and given by name."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any

from orchlog.errors import OrchlogError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def load_toml(raw: bytes, where: str) -> dict[str, Any]:
    try:
        data: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
        return data
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise OrchlogError(f"{where}: not valid TOML ({exc})") from None


def shipped(package: str) -> list[str]:
    """Names of the .toml files shipped in a package."""
    return sorted(p.name[:-5] for p in resources.files(package).iterdir() if p.name.endswith(".toml"))


def load_named(spec: str, package: str, option: str) -> tuple[str, dict[str, Any]]:
    """(where it came from, the document) for a path, or for the name of a file shipped in `package`."""
    path = Path(spec)
    if path.is_file():
        return str(path), load_toml(path.read_bytes(), str(path))
    candidate = resources.files(package) / f"{spec}.toml"
    if "/" not in spec and candidate.is_file():
        where = f"{spec} (shipped)"
        return where, load_toml(candidate.read_bytes(), where)
    raise OrchlogError(
        f"{option} {spec}: no such file, and nothing shipped by that name "
        f"(shipped: {', '.join(shipped(package)) or 'none'})"
    )
