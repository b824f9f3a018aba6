"""The TOML files compare reads (name maps, tolerances): given by path, or shipped in a package and given by name."""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Sequence
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


def _folder(package: str) -> Path:
    """Where a package's files lie. orchlog is always installed as files (its compiled modules cannot load
    from a zip), so its folder is what importlib.resources would find; importing that costs 3.5 ms, a
    hundredth of a small compare (it brings tempfile, shutil, bz2, lzma and random)."""
    file = importlib.import_module(package).__file__
    assert file is not None, f"{package} is a package of files"
    return Path(file).parent


def shipped(package: str) -> list[str]:
    """Names of the .toml files shipped in a package."""
    return sorted(p.name[:-5] for p in _folder(package).iterdir() if p.name.endswith(".toml"))


def load_named(spec: str, package: str, option: str) -> tuple[str, dict[str, Any]]:
    """(where it came from, the document) for a path, or for the name of a file shipped in `package`."""
    path = Path(spec)
    if path.is_file():
        return str(path), load_toml(path.read_bytes(), str(path))
    candidate = _folder(package) / f"{spec}.toml"
    if "/" not in spec and candidate.is_file():
        where = f"{spec} (shipped)"
        return where, load_toml(candidate.read_bytes(), where)
    raise OrchlogError(
        f"{option} {spec}: no such file, and nothing shipped by that name "
        f"(shipped: {', '.join(shipped(package)) or 'none'})"
    )


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
        return repr(v)
    if isinstance(v, str):
        escaped = "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in v)
        return f'"{escaped}"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def _toml_key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "_-" for c in k) else _toml_value(k)


def dump_toml(doc: dict[str, Any], comments: Sequence[str] = ()) -> str:
    """A TOML document of plain values, tables and arrays of tables (one level: what orchlog writes), with
    `comments` first; load_toml reads it back as the same dict."""
    lines = [f"# {c}" for c in comments]
    plain = {k: v for k, v in doc.items() if not isinstance(v, dict) and not _is_table_array(v)}
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in plain.items()]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines += ["", f"[{_toml_key(k)}]"] + [f"{_toml_key(x)} = {_toml_value(y)}" for x, y in v.items()]
        elif _is_table_array(v):
            for table in v:
                lines += ["", f"[[{_toml_key(k)}]]"] + [f"{_toml_key(x)} = {_toml_value(y)}" for x, y in table.items()]
    return "\n".join(lines) + "\n"


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)
