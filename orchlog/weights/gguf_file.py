"""The GGUF reader of `orchlog weights`, through the `gguf` package (the `orchlog[gguf]` extra): tensors in
HF's dimension order (GGUF lists dimensions innermost first), quantized types dequantized with gguf's own
routines, and the attention head counts that llama.cpp's Q/K permutation needs.

The file's layout is checked first (gguf_check.py), so that no count or length it claims can make the
package loop or allocate without end; whatever the package still raises, reading or dequantizing, is this
file's error, one line, never an exception out of orchlog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from orchlog.errors import OrchlogError
from orchlog.weights.gguf_check import check_gguf
from orchlog.weights.quant_bound import BLOCKS, bound
from orchlog.weights.tensors import TensorInfo, WeightSource


def open_gguf(path: Path) -> WeightSource:
    try:
        import gguf
    except ImportError:
        raise OrchlogError(f"{path}: reading GGUF needs the gguf package: pip install 'orchlog[gguf]'") from None
    try:
        check_gguf(path)
        reader = gguf.GGUFReader(str(path))
        tensors = {
            t.name: TensorInfo(t.name, tuple(int(d) for d in reversed(t.shape)), t.tensor_type.name.lower())
            for t in reader.tensors
        }
    except OrchlogError as exc:
        raise OrchlogError(f"{path}: not a readable GGUF file ({exc})") from None
    except Exception as exc:  # the package's own, whatever it is: the file's error
        raise OrchlogError(f"{path}: not a readable GGUF file ({type(exc).__name__}: {str(exc)[:200]})") from None
    by_name = {t.name: t for t in reader.tensors}

    def field(key: str, kind: type) -> Any:
        """A metadata value of the type asked for, else None."""
        try:
            f = reader.get_field(key)
            value = None if f is None else f.contents()
        except Exception:  # a field the package cannot decode: as if absent
            return None
        return value if isinstance(value, kind) and not isinstance(value, bool) else None

    def load(name: str) -> np.ndarray:
        t = by_name[name]
        shape = tensors[name].shape
        kind = t.tensor_type
        try:
            if kind == gguf.GGMLQuantizationType.F32:
                return np.array(t.data, dtype=np.float32).reshape(shape)
            if kind == gguf.GGMLQuantizationType.F16:
                return np.array(t.data, dtype=np.float16).astype(np.float32).reshape(shape)
            if kind == gguf.GGMLQuantizationType.F64:
                return np.array(t.data, dtype=np.float64).reshape(shape)
            values = gguf.quants.dequantize(np.asarray(t.data), kind)
            return np.asarray(values, dtype=np.float32).reshape(shape)
        except Exception as exc:  # the package's: a type it cannot dequantize, bytes that do not fit
            raise OrchlogError(f"{path}: cannot read {name} ({kind.name}): {type(exc).__name__}: {exc}") from None

    def bounder(name: str, values: np.ndarray) -> np.ndarray | None:
        kind = tensors[name].dtype
        if kind not in BLOCKS:
            return None
        try:
            found = bound(np.asarray(by_name[name].data), kind, values.reshape(-1))
        except Exception:  # bytes that are no whole blocks: no bound, the tolerance decides
            return None
        return None if found is None else found.reshape(tensors[name].shape)

    arch = field("general.architecture", str)
    n_head = field(f"{arch}.attention.head_count", int) if arch else None
    n_head_kv = field(f"{arch}.attention.head_count_kv", int) if arch else None
    return WeightSource(str(path), "gguf", tensors, load, arch, n_head, n_head_kv or n_head, bounder=bounder)
