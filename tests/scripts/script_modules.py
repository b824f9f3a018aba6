"""The scripts under scripts/ are not a package: their tests import them by name from there."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def import_script(name: str) -> ModuleType:
    """scripts/NAME.py as a module, without leaving scripts/ on sys.path."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SCRIPTS))
