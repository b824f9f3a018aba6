"""Names a package exports but imports only when first asked for (PEP 562).

A package that re-exports its submodules' names eagerly runs them all when any
one of its modules is imported: `import orchlog` would pay for NumPy and the
emitter, importing a step of the compare's pipeline would run the engine.
`lazy(__name__, {name: module})` gives the package's `__getattr__` and
`__dir__` instead (`module:attribute` where the name differs); a name is
imported once and then kept in the package."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for `package`, whose `names` load from their modules on first use."""

    def getattr_(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = names[name].partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return getattr_, dir_
