"""What `orchlog weights` reads: a set of named tensors, listed up front and loaded one at a time.

`open_weights(path)` finds the format by content, not by name: GGUF (magic
`GGUF`), safetensors (an 8-byte little-endian header length, then a JSON
object), NumPy `.npz` (a zip archive; read with allow_pickle=False, never
pickle), or a directory holding one GGUF file or safetensors shards (and
perhaps the `config.json` of a HF checkpoint, whose head counts are read).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from orchlog.errors import OrchlogError


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # NumPy order: outermost first (GGUF's ne reversed)
    dtype: str  # as stored: f32, f16, bf16, q8_0, ...


@dataclasses.dataclass
class WeightSource:
    path: str
    format: str  # "gguf", "safetensors", "npz"
    tensors: dict[str, TensorInfo]
    loader: Callable[[str], np.ndarray]  # name -> float32/float64 array in NumPy order, dequantized
    arch: str | None = None  # GGUF general.architecture, or HF config's model_type
    n_head: int | None = None
    n_head_kv: int | None = None
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)

    def load(self, name: str) -> np.ndarray:
        return self.loader(name)


def _kind(path: Path) -> str:
    with open(path, "rb") as f:
        head = f.read(9)
    if head[:4] == b"GGUF":
        return "gguf"
    if head[:4] == b"PK\x03\x04":
        return "npz"
    if len(head) == 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < os.path.getsize(path):
        return "safetensors"
    raise OrchlogError(f"{path}: not a GGUF, safetensors or .npz file")


def _hf_config(directory: Path) -> dict[str, Any]:
    config = directory / "config.json"
    if not config.is_file():
        return {}
    try:
        doc = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OrchlogError(f"{config}: not readable as JSON ({exc})") from None
    return doc if isinstance(doc, dict) else {}


def open_weights(path: str | os.PathLike[str]) -> WeightSource:
    from orchlog.weights.formats import open_npz, open_safetensors
    from orchlog.weights.gguf_file import open_gguf

    p = Path(path)
    if not p.exists():
        raise OrchlogError(f"{p} does not exist")
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
        ggufs = [f for f in files if f.suffix == ".gguf"]
        shards = [f for f in files if f.suffix == ".safetensors"]
        if len(ggufs) == 1 and not shards:
            return open_gguf(ggufs[0])
        if shards and not ggufs:
            source = open_safetensors(shards, str(p))
            config = _hf_config(p)
            source.arch = config.get("model_type")
            source.n_head = config.get("num_attention_heads")
            source.n_head_kv = config.get("num_key_value_heads", source.n_head)
            return source
        raise OrchlogError(f"{p}: expected one .gguf file or .safetensors shards inside")
    kind = _kind(p)
    if kind == "gguf":
        return open_gguf(p)
    if kind == "npz":
        return open_npz(p)
    source = open_safetensors([p], str(p))
    config = _hf_config(p.parent)
    if config:
        source.arch = config.get("model_type")
        source.n_head = config.get("num_attention_heads")
        source.n_head_kv = config.get("num_key_value_heads", source.n_head)
    return source
