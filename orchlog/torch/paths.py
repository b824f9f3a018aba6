"""Module paths: which modules a pattern picks, and which layer a path is in."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from orchlog.read.module_paths import layer_of

__all__ = ["compile_path_glob", "layer_of", "matching"]

_WILDCARD = re.compile(r"\*\*|\*|\?")
_WILDCARD_REGEX = {"**": ".*", "*": "[^.]*", "?": "[^.]"}


def compile_path_glob(pattern: str) -> re.Pattern[str]:
    """A module-path glob as a full-match regex: `*` and `?` stay within one dotted component
    (`model.layers.*` is each decoder layer, not everything inside them), `**` spans any number."""
    parts, pos = [], 0
    for m in _WILDCARD.finditer(pattern):
        parts += [re.escape(pattern[pos : m.start()]), _WILDCARD_REGEX[m[0]]]
        pos = m.end()
    parts.append(re.escape(pattern[pos:]))
    return re.compile("".join(parts))


def matching(paths: Iterable[str], patterns: Sequence[str] | None) -> list[str]:
    """The paths that match any of the globs, in the given order; every path for None."""
    if patterns is None:
        return list(paths)
    regexes = [compile_path_glob(p) for p in patterns]
    return [path for path in paths if any(rx.fullmatch(path) for rx in regexes)]
