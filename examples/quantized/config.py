"""The model of the quantized hunt: Qwen2-0.5B's widths (896 wide, 14 query
heads sharing 2 KV heads, a 4864-wide FFN) at 8 layers and a small vocabulary,
so that llama.cpp's quantized kernels run the shapes they run for the real
model while a whole hunt stays a matter of seconds."""

from __future__ import annotations

from examples.qwen2_tiny.config import TinyQwen2Config

QWEN2_05B_WIDTHS = TinyQwen2Config(
    n_vocab=2048,
    n_embd=896,
    n_layer=8,
    n_head=14,
    n_head_kv=2,
    n_ff=4864,
    n_ctx=64,
)
