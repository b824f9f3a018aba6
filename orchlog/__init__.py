"""orchlog: find where two implementations of the same model stop agreeing.

The writing side (`log`, `configure`, `flush`, `close`, `stats`) lives in
orchlog.emit, the reading side (`open_trace`) in orchlog.read, the comparer
in orchlog.compare. They are imported on first use, so that `import orchlog`
(and every `orchlog --help`) costs next to nothing, and so that the code
generator (orchlog.codegen), which renders the tables they are built on,
never needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

# The versions come from the generated tables, imported (dataclasses, typing) only when asked for.
_VERSIONS = {"__version__": "LIBRARY_VERSION", "SCHEMA_VERSION": "SCHEMA_VERSION"}
_PUBLIC = {
    "close": "orchlog.emit.api",
    "configure": "orchlog.emit.api",
    "flush": "orchlog.emit.api",
    "log": "orchlog.emit.api",
    "stats": "orchlog.emit.api",
    "open_trace": "orchlog.read.paths",
}

__all__ = ["SCHEMA_VERSION", "__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name in _VERSIONS:
        value = getattr(importlib.import_module("orchlog.schema_gen"), _VERSIONS[name])
        globals()[name] = value
        return value
    if name not in _PUBLIC:
        raise AttributeError(f"module 'orchlog' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, *_VERSIONS})
