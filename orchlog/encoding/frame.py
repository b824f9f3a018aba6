"""The frame fields of a record: what the binary stream's writer computes over a frame's own bytes.

The schema marks them `source: frame` (binary stream only, before `data`);
the reference encoder computes field X with `frame_X(prefix)`, `prefix` being
the frame's bytes before the field's value (its key included), as each
language's msgpack writer does in its method `frame_X`. The schema has none
today; a checksum of each frame would be one.
"""

from __future__ import annotations


def compute(name: str, prefix: bytes) -> object:
    """The value of frame field `name`; a field without its function is named in the error."""
    function = globals().get(f"frame_{name}")
    if function is None:
        raise NotImplementedError(f"frame field {name!r} has no function frame_{name} in {__name__}")
    return function(prefix)
