"""The tiny Qwen2 as an f32 GGUF file (PyPI `gguf` package), and back.

Metadata is what llama.cpp's qwen2 loader reads. Without a vocabulary,
`tokenizer.ggml.model = "none"` makes llama.cpp load none, so token ids are
fed directly; it then takes the vocabulary size from `qwen2.vocab_size`. With
one (examples/qwen2_tiny/vocab.py), the file carries a byte-level BPE
tokenizer as convert_hf_to_gguf.py writes Qwen2's: model "gpt2", pre-tokenizer
"qwen2", tokens, their types, merges and the special tokens' ids.

No Q/K permutation: llama.cpp runs qwen2 with NEOX-style RoPE (rotating the
two halves of each head), the layout HF's Qwen2 weights already have. The
permutation in convert_hf_to_gguf.py is for the `llama` architecture only.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from examples.qwen2_tiny.config import TINY, TinyQwen2Config
from examples.qwen2_tiny.vocab import Vocabulary

ARCH = "qwen2"


def write_gguf(
    path: str | Path,
    weights: dict[str, np.ndarray],
    config: TinyQwen2Config = TINY,
    vocabulary: Vocabulary | None = None,
) -> Path:
    path = Path(path)
    if vocabulary is not None and vocabulary.n_vocab != config.n_vocab:
        raise ValueError(f"the vocabulary has {vocabulary.n_vocab} tokens, the model {config.n_vocab}")
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
    if vocabulary is None:
        writer.add_tokenizer_model("none")
    else:
        _add_vocabulary(writer, vocabulary)
    for name, array in weights.items():
        if array.dtype != np.float32:
            raise ValueError(f"{name}: the tiny model is all f32, got {array.dtype}")
        writer.add_tensor(name, np.ascontiguousarray(array))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _add_vocabulary(writer: gguf.GGUFWriter, vocabulary: Vocabulary) -> None:
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(list(vocabulary.tokens))
    types = [gguf.TokenType.NORMAL] * vocabulary.n_vocab
    types[vocabulary.end_of_text] = gguf.TokenType.CONTROL
    writer.add_token_types(types)
    writer.add_token_merges([f"{a} {b}" for a, b in vocabulary.merges])
    writer.add_bos_token_id(vocabulary.end_of_text)
    writer.add_eos_token_id(vocabulary.end_of_text)
    writer.add_add_bos_token(vocabulary.add_bos)


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
