"""The weight files `orchlog weights` mutants are made from: safetensors (the safetensors package's writer),
.npz (NumPy's, stored and compressed) and GGUF (the gguf package's writer, with a quantized tensor and the
string arrays of a tokenizer), each holding a tensor whose name would drive a terminal or a Markdown page if
printed raw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tests.fuzz.seeds import Seed

# A name that retitles a terminal, rings its bell, splits a Markdown table, opens HTML and forges a line.
HOSTILE_NAME = "w\x1b]0;pwned\x07|<img src=x onerror=alert(1)>`x`\nRESULT: ok"


def _weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "model.embed.weight": rng.standard_normal((16, 8)).astype(np.float32),
        "model.layers.0.q.weight": rng.standard_normal((8, 8)).astype(np.float32),
        "model.layers.0.norm.weight": (1 + 0.1 * rng.standard_normal(8)).astype(np.float16),
        "model.layers.0.q.bias": rng.standard_normal(8).astype(np.float64),
        HOSTILE_NAME: rng.standard_normal(4).astype(np.float32),
    }


def make_weight_seeds(directory: Path) -> list[Seed]:
    import gguf
    from safetensors.numpy import save_file

    directory.mkdir(parents=True, exist_ok=True)
    w = _weights(np.random.default_rng(27))
    safetensors = directory / "model.safetensors"
    save_file({k: np.ascontiguousarray(v) for k, v in w.items()}, str(safetensors))
    stored, compressed = directory / "weights.npz", directory / "weights_compressed.npz"
    arrays: dict[str, Any] = {k.replace("/", "_"): v for k, v in w.items()}  # Any: numpy's stubs take a dict
    np.savez(stored, **arrays)  # of arrays for its allow_pickle too
    np.savez_compressed(compressed, **arrays)
    model = directory / "model.gguf"
    writer = gguf.GGUFWriter(str(model), arch="qwen2")
    writer.add_head_count(2)
    writer.add_head_count_kv(1)
    writer.add_token_list([f"tok{i}" for i in range(40)])
    writer.add_token_scores([float(i) for i in range(40)])
    for name, arr in w.items():
        if name == "model.layers.0.q.weight":
            arr = np.random.default_rng(1).standard_normal((8, 32)).astype(np.float32)
            q = gguf.quants.quantize(arr, gguf.GGMLQuantizationType.Q8_0)
            writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            writer.add_tensor(name, np.ascontiguousarray(arr))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return [
        Seed("weights-safetensors", safetensors, "safetensors"),
        Seed("weights-npz", stored, "npz"),
        Seed("weights-npz-compressed", compressed, "npz"),
        Seed("weights-gguf", model, "gguf"),
    ]
