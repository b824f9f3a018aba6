"""The end-to-end hunt: the tiny Qwen2 run by llama.cpp (through orchlog's ggml
adapter), HF transformers (through orchlog.torch) and the NumPy engine
(through orchlog.log, with or without a bug), each writing an orchlog trace,
and `orchlog compare` naming where each one parts from llama.cpp."""
