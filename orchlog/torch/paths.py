"""Module paths: which modules a pattern picks, and which layer a path is in."""
from __future__ import annotations

import re
from typing import Iterable, Sequence

from orchlog.strings import glob_matcher

# The first path component that is a number: `model.layers.3.mlp` is in layer 3.
_LAYER = re.compile(r"(?:^|\.)(\d+)(?:\.|$)")


def layer_of(path: str) -> int | None:
    """The block index in a module path (`model.layers.3.self_attn` -> 3), None outside the blocks."""
    m = _LAYER.search(path)
    return int(m[1]) if m else None


def matching(paths: Iterable[str], patterns: Sequence[str] | None) -> list[str]:
    """The paths that match any glob (`*` spans dots too), in the given order; every path for None."""
    if patterns is None:
        return list(paths)
    matches = glob_matcher(patterns)
    return [p for p in paths if matches(p)]
