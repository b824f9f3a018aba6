"""The digest fields of a record: what is computed over the whole tensor.

The schema marks these fields `source: digest`; the reference encoder
computes field X with `digest_X(data, dtype)` from this module, as the C++
core does with `digest_X` in orchlog/detail/encode/digest.hpp and the Rust
crate in src/encoding/digest.rs. A new digest field is one schema line and
one function here and there, all checked by the vectors.
"""

from __future__ import annotations

import blake3 as _blake3

from orchlog.encoding import sketch as _sketch
from orchlog.encoding import stats as _stats
from orchlog.schema_gen import Stats


def digest_stats(data: bytes | memoryview, dtype: str) -> Stats:
    """The whole-tensor statistics (FORMAT.md, "Stats")."""
    return _stats.compute(data, dtype)


def digest_sketch(data: bytes | memoryview, dtype: str) -> list[float]:
    """The linear sketch, 64 f32 rows (FORMAT.md, "Sketch")."""
    return _sketch.compute(bytes(data), dtype)


def digest_blake3(data: bytes | memoryview, dtype: str) -> str:
    """BLAKE3 of the tensor bytes as stored, 64 lowercase hex digits."""
    return _blake3.blake3(data).hexdigest()


def compute(name: str, data: bytes | memoryview, dtype: str) -> object:
    """The value of digest field `name`; a field without its function is named in the error."""
    function = globals().get(f"digest_{name}")
    if function is None:
        raise NotImplementedError(f"digest field {name!r} has no function digest_{name} in {__name__}")
    return function(data, dtype)
