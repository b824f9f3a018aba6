"""What made a run, as its trace's header says (`config`), and how two runs differ.

`orchlog trace llama`, `orchlog trace hf` and the adapters write the same keys into the header's
`config` (docs/trace.md lists them): the model (architecture, sizes, weight type, RoPE base, RMSNorm
epsilon, the file's BLAKE3), the run's settings (context, KV cache type, sampling) and the prompt's
token ids. `orchlog compare` prints the keys both headers carry with different values before its
verdict, so that "the reference ran q8_0, ours f32" is read first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchlog import bus_error
from orchlog.records import record
from orchlog.schema_gen import Scalar

# Keys both runs carry that differ by nature between two engines or machines and say nothing about
# the numbers: not reported.
IGNORED = frozenset({"engine", "model.file", "model.description", "prompt.text", "run.threads", "run.n_batch"})
# Reported first, in this order: what changes the numbers most.
FIRST = (
    "model.weights",
    "model.blake3",
    "hf.weights_blake3",
    "model.arch",
    "prompt.tokens",
    "prompt.add_bos",
    "model.rms_norm_eps",
    "model.rope_freq_base",
    "run.kv_type",
)
_F32_EPSILON = 2.0**-23  # a GGUF keeps epsilons and RoPE bases as f32: equal to that precision is equal


@record(frozen=True)
class RunDifference:
    key: str
    reference: Scalar
    ours: Scalar

    def line(self) -> str:
        a, b = _shown(self.reference), _shown(self.ours)
        if self.key == "model.weights":
            return f"the reference ran {a} weights, ours {b}"
        if self.key in ("model.blake3", "hf.weights_blake3"):
            return f"other weights: {self.key} is {a[:16]}... in the reference, {b[:16]}... in ours"
        if self.key == "prompt.tokens":
            return f"other prompt tokens: the reference ran [{a}], ours [{b}]"
        return f"{self.key}: the reference's is {a}, ours {b}"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "reference": self.reference, "ours": self.ours, "text": self.line()}


def _shown(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _same(a: Scalar, b: Scalar) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= _F32_EPSILON * max(abs(a), abs(b))
    return a == b


def run_config(header: Mapping[str, Any] | None) -> dict[str, Scalar]:
    """The header's `config` (empty for a trace without one, or a format without headers)."""
    config = header.get("config") if header else None
    return dict(config) if isinstance(config, Mapping) else {}


def differences(reference: Mapping[str, Any] | None, ours: Mapping[str, Any] | None) -> list[RunDifference]:
    """The config keys both headers carry with different values, the weightiest first."""
    a, b = run_config(reference), run_config(ours)
    keys = [k for k in a.keys() & b.keys() if k not in IGNORED and not _same(a[k], b[k])]
    rank = {k: i for i, k in enumerate(FIRST)}
    keys.sort(key=lambda k: (rank.get(k, len(FIRST)), k))
    return [RunDifference(k, a[k], b[k]) for k in keys]


def file_blake3(*paths: Path) -> str:
    """BLAKE3 of the files' bytes, one after the other (one file: its own BLAKE3, as `b3sum` prints)."""
    from blake3 import blake3

    bus_error.guard()  # update_mmap maps each file
    hasher = blake3(max_threads=blake3.AUTO)
    for path in paths:
        hasher.update_mmap(str(path))
    return str(hasher.hexdigest())
