"""Module paths (`model.layers.3.mlp`): which transformer block a path is in.

Shared by orchlog.torch, which logs module outputs under their paths, and
the readers of other tools' dumps, which name tensors the same way.
"""

from __future__ import annotations

import re

# The first path component that is a number: `model.layers.3.mlp` is in layer 3.
_LAYER = re.compile(r"(?:^|\.)(\d+)(?:\.|$)")
LAYER_LIMIT = 2**31 - 1  # the schema's i32


def layer_of(path: str) -> int | None:
    """The block index in a module path (`model.layers.3.self_attn` -> 3), None outside the blocks."""
    m = _LAYER.search(path)
    if m is None or len(m[1]) > 10 or int(m[1]) > LAYER_LIMIT:
        return None
    return int(m[1])
