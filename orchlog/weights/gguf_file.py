"""The GGUF reader of `orchlog weights`, through the `gguf` package (the `orchlog[gguf]` extra): tensors in
HF's dimension order (GGUF lists dimensions innermost first), quantized types dequantized with gguf's own
routines, and the attention head counts that llama.cpp's Q/K permutation needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from orchlog.errors import OrchlogError
from orchlog.weights.source import TensorInfo, WeightSource


def open_gguf(path: Path) -> WeightSource:
    try:
        import gguf
    except ImportError:
        raise OrchlogError(f"{path}: reading GGUF needs the gguf package: pip install 'orchlog[gguf]'") from None
    try:
        reader = gguf.GGUFReader(str(path))
    except (OSError, ValueError) as exc:
        raise OrchlogError(f"{path}: not a readable GGUF file ({exc})") from None

    def field(key: str) -> Any:  # whatever the GGUF field holds (gguf types its contents Any)
        f = reader.get_field(key)
        return None if f is None else f.contents()

    arch = field("general.architecture")
    by_name = {t.name: t for t in reader.tensors}
    tensors = {
        t.name: TensorInfo(t.name, tuple(int(d) for d in reversed(t.shape)), t.tensor_type.name.lower())
        for t in reader.tensors
    }

    def load(name: str) -> np.ndarray:
        t = by_name[name]
        shape = tensors[name].shape
        kind = t.tensor_type
        if kind == gguf.GGMLQuantizationType.F32:
            return np.array(t.data, dtype=np.float32).reshape(shape)
        if kind == gguf.GGMLQuantizationType.F16:
            return np.array(t.data, dtype=np.float16).astype(np.float32).reshape(shape)
        if kind == gguf.GGMLQuantizationType.F64:
            return np.array(t.data, dtype=np.float64).reshape(shape)
        try:
            values = gguf.quants.dequantize(np.asarray(t.data), kind)
        except (NotImplementedError, ValueError, KeyError) as exc:
            raise OrchlogError(f"{path}: cannot dequantize {name} ({kind.name}): {exc}") from None
        return np.asarray(values, dtype=np.float32).reshape(shape)

    n_head = field(f"{arch}.attention.head_count") if arch else None
    n_head_kv = field(f"{arch}.attention.head_count_kv") if arch else None
    return WeightSource(str(path), "gguf", tensors, load, arch, n_head, n_head_kv or n_head)
