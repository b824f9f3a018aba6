"""Module paths: which modules a pattern picks, and which layer a path is in."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# The first path component that is a number: `model.layers.3.mlp` is in layer 3.
_LAYER = re.compile(r"(?:^|\.)(\d+)(?:\.|$)")
_WILDCARD = re.compile(r"\*\*|\*|\?")
_WILDCARD_REGEX = {"**": ".*", "*": "[^.]*", "?": "[^.]"}


def layer_of(path: str) -> int | None:
    """The block index in a module path (`model.layers.3.self_attn` -> 3), None outside the blocks."""
    m = _LAYER.search(path)
    return int(m[1]) if m else None


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
