"""The tensors a weights file holds: what each is (TensorInfo) and how to load it (WeightSource).

Below every weights reader (formats.py, gguf_file.py) and `open_weights` (source.py), which finds the
reader by content."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from orchlog.records import record


@record(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # NumPy order: outermost first (GGUF's ne reversed)
    dtype: str  # as stored: f32, f16, bf16, q8_0, ...


@record
class WeightSource:
    path: str
    format: str  # "gguf", "safetensors", "npz"
    tensors: dict[str, TensorInfo]
    loader: Callable[[str], np.ndarray]  # name -> float32/float64 array in NumPy order, dequantized
    arch: str | None = None  # GGUF general.architecture, or HF config's model_type
    n_head: int | None = None
    n_head_kv: int | None = None
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    # (name, its loaded values) -> per element, how far the stored (quantized) value may sit from what it was
    # quantized from (quant_bound.py); None for tensors stored as they are, or of a type without a bound.
    bounder: Callable[[str, np.ndarray], np.ndarray | None] | None = None

    def load(self, name: str) -> np.ndarray:
        return self.loader(name)

    def bound(self, name: str, values: np.ndarray) -> np.ndarray | None:
        return None if self.bounder is None else self.bounder(name, values)
