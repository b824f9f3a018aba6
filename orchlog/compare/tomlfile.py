"""TOML for the map and tolerance files (tomllib from 3.11, tomli before)."""
from __future__ import annotations

import sys
from typing import Any

from orchlog.errors import OrchlogError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def load_toml(raw: bytes, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise OrchlogError(f"{where}: not valid TOML ({exc})") from None
