"""Quantization-aware presets: when a trace says its matrix products ran on quantized weights, the shipped
tolerances measured for that quantization grade it, unless the user chose tolerances.

orchlog's ggml adapter writes each matrix product's and embedding lookup's weight type into its record
(meta `weight_type`: q8_0, q4_K, f16, ...). A reference on Q8_0 weights differs from an exact computation by
0.5-4% at every stage before any bug (docs/noise.md), so the relative default (1e-3) would fail every pair;
the presets orchlog/tolerances/<type>.toml hold, per checkpoint, stage and layer, the envelope measured
between llama.cpp on a file of that type and on the f32 file it was made from (examples/quantized/presets.py
writes them; how, and their limits, in docs/noise.md). The coarsest type either trace's first records name
decides; the report says which preset graded and why.
"""

from __future__ import annotations

import functools
import os

from orchlog.errors import OrchlogError
from orchlog.read.paths import open_first
from orchlog.read.trace import Trace

# Weight types from finest to coarsest, each with the preset that grades it (None: the default is right).
COARSENESS: tuple[tuple[str, str | None], ...] = (
    ("f64", None),
    ("f32", None),
    ("f16", "f16"),
    ("bf16", "bf16"),
    ("q8_0", "q8_0"),
    ("q8_1", "q8_0"),
    ("q6_K", "q6_k"),
    ("q5_K", "q5_k"),
    ("q5_0", "q5_k"),
    ("q5_1", "q5_k"),
    ("q4_K", "q4_k"),
    ("q4_0", "q4_k"),
    ("q4_1", "q4_k"),
    ("iq4_nl", "q4_k"),
    ("iq4_xs", "q4_k"),
)
_RANK = {name: (k, preset) for k, (name, preset) in enumerate(COARSENESS)}
PEEK_ROWS = 512  # records of a trace's start read to learn its weight types


def weight_types(trace: Trace) -> set[str]:
    """The weight types the first records of a trace name (meta `weight_type`; a directory's: its first
    file's, as found when the directory was opened: finding it again meant looking into every file, 0.1 s
    for 2,050 files); read afresh, from its start (once per file as it is: the walk and the finish both ask)."""
    try:
        stat = os.stat(trace.first_file)
    except (OSError, TypeError, ValueError):
        return set()
    return set(_weight_types(trace.first_file, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=16)
def _weight_types(path: str, _mtime: int, _size: int) -> frozenset[str]:
    try:
        batch = next(open_first(path).batches(rows=PEEK_ROWS, tensors=False), None)
    except (OSError, ValueError, OrchlogError):
        return frozenset()
    if batch is None:
        return frozenset()
    return frozenset(
        m["weight_type"] for m in batch.meta if isinstance(m, dict) and isinstance(m.get("weight_type"), str)
    )


def preset_for(types: set[str]) -> tuple[str, str] | None:
    """(preset, the weight type that asks for it): the coarsest known type's preset, or None when no type
    asks for one. Types orchlog knows no preset for (coarser than 4 bits, or new ones) ask for the coarsest."""
    known = [(_RANK[t][0], _RANK[t][1], t) for t in types if t in _RANK]
    unknown = sorted(t for t in types if t not in _RANK)
    if unknown:
        return COARSENESS[-1][1] or "q4_k", unknown[0]
    if not known:
        return None
    _, preset, name = max(known)
    return (preset, name) if preset else None
