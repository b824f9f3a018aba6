"""The tiny Qwen2 as an f32 GGUF file (PyPI `gguf` package), and back.

Metadata is what llama.cpp's qwen2 loader reads. `tokenizer.ggml.model =
"none"` makes llama.cpp load no vocabulary, so token ids are fed directly;
it then takes the vocabulary size from `qwen2.vocab_size`.

No Q/K permutation: llama.cpp runs qwen2 with NEOX-style RoPE (rotating the
two halves of each head), the layout HF's Qwen2 weights already have. The
permutation in convert_hf_to_gguf.py is for the `llama` architecture only.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from examples.qwen2_tiny.config import TINY, TinyQwen2Config

ARCH = "qwen2"


def write_gguf(path: str | Path, weights: dict[str, np.ndarray], config: TinyQwen2Config = TINY) -> Path:
    path = Path(path)
    writer = gguf.GGUFWriter(str(path), arch=ARCH)
    writer.add_name("orchlog-tiny-qwen2")
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(config.n_ctx)
    writer.add_embedding_length(config.n_embd)
    writer.add_block_count(config.n_layer)
    writer.add_feed_forward_length(config.n_ff)
    writer.add_head_count(config.n_head)
    writer.add_head_count_kv(config.n_head_kv)
    writer.add_rope_freq_base(config.rope_theta)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_vocab_size(config.n_vocab)
    writer.add_tokenizer_model("none")
    for name, array in weights.items():
        if array.dtype != np.float32:
            raise ValueError(f"{name}: the tiny model is all f32, got {array.dtype}")
        writer.add_tensor(name, np.ascontiguousarray(array))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def read_gguf_tensors(path: str | Path, dequantize: bool = False) -> dict[str, np.ndarray]:
    """Every tensor of a GGUF, copied out of the memory map, in NumPy (HF) shape, as float32. Quantized
    and half-precision tensors (a file from llama.cpp's quantizer) are refused unless `dequantize`, which
    widens them as ggml does: the weights an engine computing in float32 on that file runs."""
    reader = gguf.GGUFReader(str(path))
    tensors = {}
    for tensor in reader.tensors:
        numpy_shape = tuple(int(n) for n in reversed(tensor.shape))
        kind = tensor.tensor_type
        if kind == gguf.GGMLQuantizationType.F32:
            tensors[tensor.name] = np.array(tensor.data, dtype=np.float32).reshape(numpy_shape)
        elif dequantize:
            widened = gguf.quants.dequantize(np.asarray(tensor.data), kind)
            tensors[tensor.name] = np.ascontiguousarray(widened, dtype=np.float32).reshape(numpy_shape)
        else:
            raise ValueError(f"{tensor.name}: expected F32, found {kind.name} (dequantize=True widens it)")
    return tensors
