"""The frame fields of a record or header: what the binary stream's writer computes over a frame's own bytes.

The schema marks them `source: frame` (binary stream only, after `data`);
the reference encoder computes field X with `frame_X(prefix)`, `prefix`
being every byte of the frame before X's key (the map header through the
tensor bytes), as each language's msgpack writer does in its method
`frame_X`, which writes the key and the value.
"""

from __future__ import annotations

from orchlog.kernels import crc32c


def frame_crc32c(prefix: bytes) -> int:
    """The frame checksum (FORMAT.md, "Frame checksum"): CRC-32C of the frame's bytes before its key."""
    return crc32c(prefix)


def compute(name: str, prefix: bytes) -> object:
    """The value of frame field `name`; a field without its function is named in the error."""
    function = globals().get(f"frame_{name}")
    if function is None:
        raise NotImplementedError(f"frame field {name!r} has no function frame_{name} in {__name__}")
    return function(prefix)
