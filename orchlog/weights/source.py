"""What `orchlog weights` reads: a set of named tensors, listed up front and loaded one at a time.

`open_weights(path)` finds the format by content, not by name: GGUF (magic
`GGUF`), safetensors (an 8-byte little-endian header length, then a JSON
object), NumPy `.npz` (a zip archive; read with allow_pickle=False, never
pickle), or a directory holding one GGUF file or safetensors shards (and
perhaps the `config.json` of a HF checkpoint, whose head counts are read).
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from orchlog.errors import OrchlogError
from orchlog.read.files import open_regular, read_at_most
from orchlog.weights.formats import open_npz, open_safetensors
from orchlog.weights.gguf_file import open_gguf
from orchlog.weights.tensors import WeightSource

MAX_CONFIG = 16 << 20  # a HF config.json is a few kilobytes


def _kind(path: Path) -> str:
    """The format, by content. A FIFO, a device or a socket is refused without blocking (open_regular)."""
    with open_regular(path) as f:
        head = f.read(9)
        size = os.fstat(f.fileno()).st_size
    if head[:4] == b"GGUF":
        return "gguf"
    if head[:4] == b"PK\x03\x04":
        return "npz"
    if len(head) == 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < size:
        return "safetensors"
    raise OrchlogError(f"{path}: not a GGUF, safetensors or .npz file")


def _hf_config(source: WeightSource, directory: Path) -> WeightSource:
    """`source` with the architecture and head counts of the HF config.json in `directory`, where there is
    one; a value of the wrong type is left out, as if absent."""
    config = directory / "config.json"
    if not config.is_file():
        return source
    try:
        with open_regular(config) as f:
            text = read_at_most(f, MAX_CONFIG + 1)
        if len(text) > MAX_CONFIG:
            raise ValueError(f"more than {MAX_CONFIG:,} bytes")
        doc = orjson.loads(text)
    except (OSError, ValueError) as exc:  # orjson's decode error is a ValueError (and caps nesting)
        raise OrchlogError(f"{config}: not readable as JSON ({exc})") from None
    if not isinstance(doc, dict):
        return source

    def count(key: str) -> int | None:
        value = doc.get(key)
        return value if type(value) is int and value > 0 else None

    arch = doc.get("model_type")
    source.arch = arch if isinstance(arch, str) else None
    source.n_head = count("num_attention_heads")
    source.n_head_kv = count("num_key_value_heads") or source.n_head
    return source


def open_weights(path: str | os.PathLike[str]) -> WeightSource:
    p = Path(path)
    if not p.exists():
        raise OrchlogError(f"{p} does not exist")
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
        ggufs = [f for f in files if f.suffix == ".gguf"]
        shards = [f for f in files if f.suffix == ".safetensors"]
        if len(ggufs) == 1 and not shards:
            _kind(ggufs[0])  # a regular file, by content too
            return open_gguf(ggufs[0])
        if shards and not ggufs:
            return _hf_config(open_safetensors(shards, str(p)), p)
        raise OrchlogError(f"{p}: expected one .gguf file or .safetensors shards inside")
    kind = _kind(p)
    if kind == "gguf":
        return open_gguf(p)
    if kind == "npz":
        return open_npz(p)
    return _hf_config(open_safetensors([p], str(p)), p.parent)
